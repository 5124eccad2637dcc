"""Each lesson's live experiment, by chapter number: widgets, engine calls and charts, returning
the figures and answers the page's common parts show and check (ui.learn.content.Outcome)."""

from ui.learn import dse, footprint, pipeline, roofline, sensitivity, serving, training

EXPERIMENTS = {
    "0": roofline.hello,
    "1": roofline.memory_wall,
    "2": serving.two_phases,
    "3": serving.kv_cache,
    "4": pipeline.starving,
    "5": serving.quantization,
    "6": training.scaling,
    "7": footprint.geography,
    "8": footprint.reasoning,
    "9": sensitivity.invest,
    "10": sensitivity.wafer,
    "11": training.memory,
    "12": dse.design_space,
}
