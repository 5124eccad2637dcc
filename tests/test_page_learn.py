# ruff: noqa: RUF001 (Chinese text: full-width punctuation is right there)
"""AppTest of the lessons page in both languages: every lesson draws its charts, shows the
tutorial's figures beside ours and checks its exercises right and wrong; deep links, the lesson
picker, share links with `lang`; and the frame of another page (/solve) in Chinese with its
numbers unchanged."""

import math
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from streamlit.testing.v1 import AppTest

import engine
from ui.core.frame import share_key
from ui.learn.lessons import LESSONS
from ui.learn.link import DEFAULTS, NUMBERS
from ui.words import i18n
from ui.words.format import fmt

ROOT = Path(__file__).resolve().parent.parent
LANGS = ("en", "zh")
# Each exercise's answer straight from the engine (the page must check against the same).
ANSWERS = {
    "0": {
        "bound64": 1,  # compute-bound
        "h100": engine.compute_bound_batch("ResNet-50", "H100"),
        "mfu256": engine.solve("ResNet-50", "A100", 256).mfu * 100,
        "llama_ms": engine.solve("Llama-3.1-8B", "A100", 1).latency_s * 1e3,
    },
    "1": {
        "b200": engine.solve("Llama-3.1-8B", "H100", 1).latency_s
        / engine.solve("Llama-3.1-8B", "B200", 1).latency_s,
        "never": 1,  # no
    },
    "2": {
        "ttft": engine.decode(
            model="Llama-3.1-8B", hardware="H100", batch_size=1, context=2048
        ).ttft_s
        * 1e3,
        "ratio": engine.decode(
            model="Llama-3.1-8B", hardware="A100", batch_size=1, context=2048
        ).tpot_s
        / engine.decode(model="Llama-3.1-8B", hardware="H100", batch_size=1, context=2048).tpot_s,
        "phase": 0,  # the prefill
    },
    "3": {"h200": 6, "h200_int8": 13, "llama70": 0},
    "4": {"util64": 13.73, "medical": 1, "dali": 100.0},
    "5": {
        "int4": engine.decode(
            model="Llama-3.1-8B", hardware="H100", batch_size=1, context=2048
        ).tpot_s
        / engine.decode(
            model="Llama-3.1-8B", hardware="H100", batch_size=1, context=2048, precision="int4"
        ).tpot_s,
        "int8_resnet": engine.solve(
            model="ResNet-50", hardware="A100", batch_size=256, precision="int8"
        ).latency_s
        * 1e3,
    },
    "6": {"mtbf2048": 50_000 / 2048, "fail2048": 720 / (50_000 / 2048)},
    "7": {  # 10 days in Poland; 256 × 0.7 kW × 360 h × 1.58 × 820 g/kWh = 83.6 t; PUE 2
        "which": 1,
        "fifteen": 256 * 0.7 * 360 * 1.58 * 820 / 1e6,
        "pue_even": 2.0,
    },
    "8": {  # less than 16×; ⌈100 × one K = 8 query's time⌉ replicas of 8 H100
        "k16": 0,
        "gpus8": 8
        * math.ceil(
            100
            * engine.serve(
                "Llama-3.1-405B",
                "H100",
                tp=8,
                precision="fp8",
                batch_size=1,
                input_tokens=2048,
                output_tokens=400,
            )["e2e_latency_ms"]
            / 1e3
        ),
    },
    "9": {
        "e_bw": engine.sensitivity(
            engine.Deployment("Llama-3.1-70B", "A100"), engine.Batch(1024, 128)
        ).elasticity("memory_bandwidth", "tpot_ms"),
        "bw_tbps": engine.synthesis(
            engine.Deployment("Llama-3.1-70B", "A100"), engine.Batch(1024, 128)
        ).required("memory_bandwidth")
        / 1e12,
        "upgrade": 0,  # memory bandwidth
    },
    "10": {
        # one layer of GPT-3 (349.1 GB / 96) at 1.2 TB/s
        "layer_ms": engine.serve(engine.Deployment("GPT-3-175B", "CS-3"), engine.Batch(2048, 128))[
            "weight_bytes_per_device"
        ]
        / 1.2e12
        * 1e3,
        "wafer_tpot": engine.serve(
            engine.Deployment("GPT-3-175B", "CS-3"), engine.Batch(2048, 128)
        )["tpot_ms"],
        "fit_batch": 3,
        "faster": 0,  # the H100
    },
    "11": {
        "zero3": 25.72,
        "unsplit": 3,  # activations
        # the audit: carbon = GPUs × TDP × hours × PUE × g/kWh; the GPUs, TDP and hours cancel:
        # (1.58 × 820) ÷ (1.06 × 20) = 1,295.6 ÷ 21.2 = 61.11
        "poland_carbon": (1.58 * 820) / (1.06 * 20),
        # Young–Daly: T = √(2 × 2/60 h × 4 h) = 0.5164 h; writing: (2/60) ÷ 0.5164 = 6.455 %
        "self_check": 100 * (2 / 60) / math.sqrt(2 * (2 / 60) * 4),
    },
    "12": {"chapter_valid": 0, "best8192": 1},  # none (batch < dp); tp 4 × pp 4
}


def learn(query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("pages/learn.py")
    at.query_params.update(query)
    return at.run()


def tr(lang: str, message: str) -> str:
    return i18n.catalogue(lang).gettext(message)


def texts(at: AppTest) -> str:
    return "\n".join(
        [m.value for m in at.markdown] + [c.value for c in at.caption] + [t.value for t in at.title]
    )


def param(at: AppTest, key: str) -> str | None:
    value = at.query_params.get(key)
    return value[-1] if isinstance(value, list) else value


def test_every_lesson_has_answers_for_its_exercises():
    assert set(ANSWERS) == set(NUMBERS) == set(LESSONS) == set(DEFAULTS)
    for n, lesson in LESSONS.items():
        assert {e.key for e in lesson.exercises} == set(ANSWERS[n])


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("number", NUMBERS)
def test_a_lesson_renders_its_chart_the_tutorials_figures_and_checks_answers(number, lang):
    lesson = LESSONS[number]
    at = learn({"lesson": number, **({"lang": lang} if lang != "en" else {})})
    assert not at.exception and not at.warning
    assert at.get("plotly_chart"), "no chart"
    assert at.get("download_button"), "no CSV download"
    shown = texts(at)
    title = tr(lang, "Lesson {number}: {title}").format(number=number, title=tr(lang, lesson.title))
    assert at.title[0].value == title
    assert tr(lang, lesson.question) in shown
    for p in lesson.published:  # each published figure, in the page's language
        assert tr(lang, p.label) in shown and tr(lang, p.tutorial) in shown, p.key
    assert param(at, "lesson") == number and param(at, "lang") == (None if lang == "en" else lang)
    for e in lesson.exercises:
        _check_exercise(at=at, lang=lang, number=number, e=e)


def _check_exercise(at: AppTest, lang: str, number: str, e) -> None:
    key = f"learn:{number}:{e.key}"
    answer = ANSWERS[number][e.key]
    right_text = tr(lang, "Right: the engine gives {answer}.").split("{")[0]
    hint = tr(lang, "Not yet. Hint: {hint}").format(hint=tr(lang, e.hint))
    if e.choices:
        wrong = (int(answer) + 1) % len(e.choices)
        at.radio(key=key).set_value(wrong).run()
        assert hint in [x.value for x in at.error], e.key
        at.radio(key=key).set_value(int(answer)).run()
    else:
        wrong = answer + 10 * e.tolerance + 1
        at.number_input(key=key).set_value(round(wrong, 2)).run()
        assert hint in [x.value for x in at.error], e.key
        at.number_input(key=key).set_value(round(answer, 2) if e.tolerance else round(answer)).run()
    assert not at.exception
    assert any(x.value.startswith(right_text) for x in at.success), (e.key, answer)


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_3_says_how_many_users_fit_at_2k_and_at_128k_and_numbers_its_exercises(lang):
    # Llama-3.1-8B on an 80 GiB H100: usable 0.9 × 85.90 GB = 77.31 GB, less 16.06 GB of
    # weights = 61.25 GB for the KV cache. One user's cache is 131,072 B per token (2 × 32
    # layers × 8 KV heads × 128 × 2 B): at 2,048 tokens 268.4 MB, so 61.25 / 0.2684 = 228.2
    # -> 228 users; at 131,072 tokens 17.18 GB, so 61.25 / 17.18 = 3.56 -> 3 users.
    at = learn({"lesson": "3", **({"lang": lang} if lang != "en" else {})})
    why_short = tr(lang, LESSONS["3"].published[3].why)
    said = next(c.value for c in at.caption if c.value.startswith(why_short[:6]))
    assert said == why_short.format(short_kv="268 MB", short_users="228")
    ours = tr(lang, "Tutorial: {tutorial}  \nOurs: **{ours}**")
    shown = [m.value for m in at.markdown]
    for p, figure in zip(LESSONS["3"].published[2:], ("3", "228"), strict=True):  # 128K, 2K
        assert ours.format(tutorial=tr(lang, p.tutorial), ours=figure) in shown, p.key
    why_long = tr(lang, LESSONS["3"].published[2].why).format(users="3")
    assert why_long in [c.value for c in at.caption]
    # the exercises in the chapter's order: 1 (Llama-3 70B), 2 (the H200), then its int8 part
    fields = [n for n in at.number_input if str(n.key).startswith("learn:3:")]
    assert [str(n.key).split(":")[-1] for n in fields] == ["llama70", "h200", "h200_int8"]
    assert [e.prompt.split(":")[0] for e in LESSONS["3"].exercises[:2]] == [
        "Exercise 1",
        "Exercise 2",
    ]


def test_lesson_1_in_chinese_is_in_chinese():
    at = learn({"lesson": "1", "lang": "zh"})
    assert at.title[0].value == "第 1 课：内存墙"
    assert at.sidebar.selectbox[0].value == "zh"
    shown = texts(at)
    assert "访存受限（memory-bound）" in shown and "显存带宽（memory bandwidth）" in shown
    assert "Tutorial:" not in shown and "教程：" in shown
    assert "NVIDIA's H100 has" not in shown  # the English question is not shown
    assert [p.proto.label for p in at.sidebar.get("page_link")][:2] == ["概览", "单次求解"]
    # numbers as in English: GB, ms, TFLOP/s written the same
    assert "312 TFLOP/s → 989 TFLOP/s" in shown and "9 ms / 5.6 ms" in shown


def test_lesson_0_shows_the_seed_tutorials_numbers():
    shown = texts(learn({"lesson": "0"}))
    for figure in ("0.543 ms", "1,843 images/s", "72.8", "76.5", "2.4 % → 46.4 %", "9.0 ms"):
        assert figure in shown
    ours = ("543 µs", "72.8 FLOP/B against 76.5 FLOP/B", "2.42% → 46.4%")
    ours += ("4 in the sweep; exactly 3", "9 ms, 111 tokens/s")
    for figure in ours:
        assert f"**{figure}**" in shown
    assert "sweep of 1, 2, 4, 8 … can only report 4; the exact crossover is batch 3" in shown


def test_lesson_2_shows_the_slip_and_both_numbers():
    shown = texts(learn({"lesson": "2"}))
    assert '"a fraction of a millisecond"' in shown and "**5.2 ms**" in shown
    assert "16 GB ÷ 3.35 TB/s = 4.8 ms" in shown and "about 5 ms" in shown


def test_widgets_change_the_scenario_and_the_link():
    at = learn({"lesson": "0"})
    at.selectbox(key="learn:hardware").set_value("H100").run()
    at.number_input(key="learn:batch").set_value(3).run()
    assert not at.exception
    assert param(at, "hardware") == "H100" and param(at, "batch") == "3"
    shown = texts(at)
    assert "**NVIDIA H100" in shown and "compute-bound" in shown  # batch 3: the exact crossover
    links = {p.proto.page: p.proto.query_string for p in at.main.get("page_link")}
    assert links["solve"] == "model=ResNet-50&hardware=H100&batch=3&precision=fp16"


def test_the_picker_changes_lesson_and_forgets_the_last_ones_link():
    at = learn({"lesson": "0", "batch": "64", "lang": "zh"})
    at.selectbox(key="learn:lesson").set_value("4").run()
    assert not at.exception and param(at, "lesson") == "4"
    assert param(at, "batch") == "256" and param(at, "lang") == "zh"  # lesson 4's default


def test_a_bad_lesson_is_refused_with_a_warning_and_other_lessons_params_are_accepted():
    at = learn({"lesson": "99"})  # no chapter 99
    assert "lesson" in at.warning[0].value and at.title[0].value.startswith("Lesson 0")
    at = learn({"lesson": "0", "zero": "3", "mttf_hours": "1000", "lang": "zh"})
    assert not at.warning


@pytest.mark.parametrize("number", NUMBERS)
def test_the_full_page_links_open_their_scenario_without_warnings(number):
    at = learn({"lesson": number})
    for p in at.main.get("page_link"):
        target = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        target.switch_page(f"pages/{p.proto.page}.py")
        query = dict(parse_qsl(p.proto.query_string))
        target.query_params.update(query)
        target.run()
        dropped = [w.value for w in target.warning if w.icon == "🔗"]  # link values refused
        assert not target.exception and not dropped, (p.proto.page, query, dropped)


def test_solve_in_chinese_shows_the_frame_in_chinese_and_the_same_numbers():
    query = {"model": "ResNet-50", "hardware": "A100", "batch": "8"}
    runs = {}
    for lang in LANGS:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.switch_page("pages/solve.py")
        at.query_params.update({**query, "lang": lang})
        at.session_state[share_key("solve")] = True  # the share box opened
        runs[lang] = at.run()
        assert not runs[lang].exception and not runs[lang].warning
    zh, en = runs["zh"], runs["en"]
    nav = [p.proto.label for p in zh.sidebar.get("page_link")]
    assert nav[:5] == ["概览", "单次求解", "批大小扫描", "硬件对比", "LLM 解码"] and "课程" in nav
    assert zh.sidebar.selectbox[0].label == ":material/language: 语言（Language）"
    assert "🔗 分享此场景" in [e.label for e in zh.expander]
    same = [m.value for m in zh.metric][1:] == [m.value for m in en.metric][1:]  # 1st: a word
    assert same and [m.label for m in zh.metric][:2] == ["瓶颈", "延迟"]
    assert param(zh, "lang") == "zh" and param(en, "lang") is None  # written only if not English
    link = next(c.value for c in zh.code if "lang=zh" in c.value)
    assert "batch=8" in link


def test_the_language_picker_switches_and_the_link_follows():
    at = learn({"lesson": "3"})
    at.sidebar.selectbox[0].set_value("zh").run()
    assert at.title[0].value == "第 3 课：KV 缓存" and param(at, "lang") == "zh"
    at.sidebar.selectbox[0].set_value("en").run()
    assert at.title[0].value == "Lesson 3: The KV-Cache" and param(at, "lang") is None


def test_the_overview_in_chinese():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update({"lang": "zh"})
    at.run()
    assert not at.exception and at.title[0].value == "屋顶线探索器（Roofline Explorer）"
    labels = [p.proto.label for p in at.main.get("page_link")]
    assert "**课程**" in labels and "**单次求解**" in labels


def test_lesson_11_audits_the_chapters_run_domain_by_domain():
    at = learn({"lesson": "11"})
    assert not at.exception
    table = next(d.value for d in at.dataframe if "Domain" in d.value.columns)
    shown = dict(zip(table["Domain"], table["Our figure"], strict=True))
    run = engine.TrainRun("Llama-3.1-70B", "H100", gpus=512, global_batch_size=2048, seq_len=2048)
    step = engine.train(run, engine.TrainLayout(tp=8, pp=1, zero=1)).as_dict()
    assert step["fits_in_memory"] and step["dp"] == 64
    assert shown["Node: the training step"].startswith(fmt(step["step_time_s"], "s"))
    # data: tokens/s × 2 bytes a token id
    assert shown["Data: token ids to the GPUs"] == fmt(2 * step["tokens_per_s"], "B/s")
    # tokens in 30 days (2,592,000 s) over the matrix products' weights
    ratio = step["tokens_per_s"] * 2_592_000 / step["matmul_params"]
    assert shown["Algorithm: tokens per parameter"].startswith(fmt(ratio) + " (")
    # MTBF = 50,000 h ÷ 512 = 97.66 h; T = √(2 × 120 s × 97.66 h) = √(2 × 0.0333 × 97.66) = 2.55 h
    mtbf = 50_000 / 512
    interval = math.sqrt(2 * (120 / 3600) * mtbf)
    reliability = shown["Fleet: reliability"]
    assert f"MTBF {fmt(mtbf, 'h')}" in reliability and f"every {fmt(interval, 'h')}" in reliability
    assert f"{fmt(720 / mtbf)} failures" in reliability
    # IT energy 512 × 700 W × 720 h = 258.048 MWh; × PUE × g/kWh:
    # Quebec 258.048 × 1.06 × 20 = 5.47 t; Poland 258.048 × 1.58 × 820 = 334.3 t
    carbon = shown["Ops: carbon"]
    assert fmt(258.048 * 1.06 * 20 / 1000, "tCO2e") in carbon
    assert fmt(258.048 * 1.58 * 820 / 1000, "tCO2e") in carbon
    words = texts(at)
    assert "By the formula: √(2 × 2 min × 240 min) = 31.0 min" in words
    assert fmt(61.11, "×") in "\n".join(
        at.get("markdown")[i].value for i in range(len(at.markdown))
    )
