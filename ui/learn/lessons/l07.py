"""Lesson 7, "Geography is a Systems Variable" (07_geography.qmd)."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="7",
    source="07_geography.qmd",
    title=N_("Geography is a systems variable"),
    question=N_(
        "A 256-GPU cluster (32 DGX H100) trains a model for 30 days. Where it stands does not "
        "change its speed, but does it change its carbon, its water and its cost? Every "
        "kilowatt-hour carries the carbon of the grid that made it: a hydro grid emits a few "
        "grams per kWh, a coal grid hundreds. The facility adds its own overhead, the **PUE** "
        "(facility energy ÷ IT energy)."
    ),
    experiment=N_(
        "The same cluster in the chapter's four grids (Quebec, Norway, US average, Poland), "
        "each with its carbon intensity, PUE and water use per kWh from the MLSys·im catalogue. "
        "Energy = GPUs × power × hours × PUE; carbon = energy × intensity; site water = IT "
        "energy × WUE. Beside it, what owning the cluster costs for those days (amortised "
        "purchase, power, maintenance) and the carbon's cost at a carbon price. Change the "
        "days and the price."
    ),
    published=(
        Published(
            key="ratio",
            label=N_("Carbon, Poland ÷ Quebec"),
            tutorial=N_('"roughly 40x"'),
            why=N_(
                "Not from the chapter's own inputs: {intensity_ratio} is the ratio of the "
                "intensities alone (820 ÷ 20). Its catalogue also gives Poland a PUE of 1.58 "
                "and Quebec 1.06, so Poland draws 49 % more energy for the same GPUs: "
                "(820 × 1.58) ÷ (20 × 1.06) = 61."
            ),
        ),
        Published(
            key="intensities",
            label=N_("Intensities used: Quebec, Norway, US average, Poland (gCO2/kWh)"),
            tutorial=N_("~20, ~29, ~390, ~820 (the chapter's background table)"),
            why=N_(
                "We use the MLSys·im catalogue the chapter's code runs on: it gives Norway 10 "
                "and the US 429, not the table's 29 and 390. Each grid's source is in "
                "data/grids.toml; edit them on the training planner."
            ),
        ),
        Published(
            key="duration",
            label=N_("10 days in Poland against 30 days in Quebec"),
            tutorial=N_('"10 days in Poland emits more than 30 days in Quebec"'),
            why=N_("Agrees: a third of the days cannot offset 61 times the carbon per GPU-hour."),
        ),
        Published(
            key="selfcheck",
            label=N_("15 days in Poland ÷ 30 days in Quebec"),
            tutorial=N_('"41/2 = ~20x worse"'),
            why=N_("The chapter's self-check again leaves the PUE out: 61 ÷ 2 = 31, not 41 ÷ 2."),
        ),
        Published(
            key="price",
            label=N_("Carbon cost of the 30 days at $50/tCO2e"),
            tutorial=N_('"a visible cost differential", potentially shifting the cheapest region'),
            why=N_(
                "Small beside owning the cluster: {share} of Poland's cost for the 30 days. "
                "With one electricity price everywhere, the lowest PUE is also the cheapest "
                "power, so {cheapest} stays cheapest at any carbon price; only a cheaper local "
                "electricity price could make a dirty grid cheaper."
            ),
        ),
    ),
    exercises=(
        Exercise(
            "which",
            N_("30 days in Quebec or 10 days in Poland: which emits more carbon?"),
            N_("Compare the intensity × PUE ratio (about 61) with the ratio of the days (3)."),
            choices=(N_("30 days in Quebec"), N_("10 days in Poland")),
        ),
        Exercise(
            "fifteen",
            N_("The carbon of 15 days in Poland, in tCO2e?"),
            N_("256 × 0.7 kW × 360 h × 1.58 × 820 g/kWh."),
            unit="tCO2e",
            tolerance=0.5,
        ),
        Exercise(
            "pue_even",
            N_("At what PUE does the facility's overhead equal the IT energy itself?"),
            N_("The overhead is (PUE − 1) × IT energy."),
            tolerance=0.05,
        ),
    ),
    takeaway=N_(
        "Where a cluster runs sets its carbon more than how long it runs: grid intensities "
        "differ up to 80-fold between hydro and coal (Norway to Poland), and the facility's "
        "PUE multiplies the gap. "
        "Water follows the cooling, not the grid. At today's carbon prices the carbon cost is "
        "small beside owning the GPUs; the electricity price and the PUE decide the bill."
    ),
)
