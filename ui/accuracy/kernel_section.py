"""The accuracy page's "Kernel curves" section (Streamlit glue over ui/accuracy/kernel_curves.py).

Pick an accelerator, a stack and an operator class (the link's `kernel_hw`, `kernel_stack`,
`kernel_op`); the page draws every data type's curve, tabulates its parameters, source and
held-out errors, and offers the table as CSV. docs/model.md, "Kernel efficiency curves".
"""

from __future__ import annotations

import streamlit as st

import engine
from ui.accuracy import kernel_curves as kc
from ui.core.downloads import download_csv
from ui.links import state
from ui.links.params import Link
from ui.words.i18n import _
from ui.words.text import plain

ss = st.session_state
PNG = {"toImageButtonOptions": {"format": "png"}}


def _pick(link: Link, name: str, *, options: list[str], label: str, format_func, where) -> str:
    """A select over `options`; a held value that is not among them falls to the first."""
    key = link.key(name)
    if ss.get(key) not in options:
        ss[key] = options[0]
    return where.selectbox(
        label,
        options,
        key=key,
        index=state.drawn_index(key, options),
        format_func=format_func,
    )


def pickers(link: Link, curves: engine.KernelCurves) -> tuple[str, str, str]:
    """(accelerator, stack, operator class), each offering only what has curves."""
    left, middle, right = st.columns(3)
    accelerators = list(dict.fromkeys(c.accelerator for c in curves.curves))
    hw = _pick(
        link, "kernel_hw", options=accelerators, label=_("Accelerator"), format_func=str, where=left
    )
    stacks = [s for s in kc.STACK_LABELS if curves.select(hw, s)]
    stack = _pick(
        link,
        "kernel_stack",
        options=stacks,
        label=_("Stack"),
        format_func=kc.STACK_LABELS.get,
        where=middle,
    )
    ops = [op for op in kc.OP_LABELS if curves.select(hw, stack, op)]
    op = _pick(
        link,
        "kernel_op",
        options=ops,
        label=_("Operator class"),
        format_func=lambda o: _(kc.OP_LABELS[o]),
        where=right,
    )
    return hw, stack, op


def show(link: Link, profile: engine.Profile) -> None:
    """The section: pickers, the curves, their parameters and errors, the CSV; then how
    `profile` (the page's) moves its GEMM efficiencies between accelerators by them."""
    st.subheader(_("Kernel curves: efficiency by shape, fitted to measured kernels"))
    st.caption(
        _(
            "Each curve is a small roofline with named parameters, fitted by "
            "tools/kernel_fit to aiconfigurator's measured kernel tables and judged on "
            "shapes the fit never saw (held out). The serving model reads the GEMM curves "
            "(the kernel transfer below); the attention and collective curves are drawn, not "
            "yet used. docs/model.md, 'Kernel efficiency curves'."
        )
    )
    curves = engine.kernel_curves()
    hw, stack, op = pickers(link, curves)
    chosen = curves.select(hw, stack, op)
    st.plotly_chart(
        kc.kernel_figure(kc.curve_points(chosen), op), key="acc:kernel_figure", config=PNG
    )
    st.dataframe(
        kc.parameters_table(chosen),
        hide_index=True,
        key="acc:kernel_table",
        column_config={_("source"): st.column_config.LinkColumn(_("source"))},
    )
    download_csv(
        df=kc.csv_table(chosen),
        filename=f"kernel_curves_{hw}_{stack}_{op}.csv",
        key="acc:kernel_csv",
        label=_("Download the table (CSV)"),
    )
    with st.expander(_("The worst held-out shapes of each curve")):
        for curve in chosen:
            st.markdown(f"**{plain(curve.dtype)}**: {plain(curve.fit.held_out)}")
            for line in curve.fit.worst:
                st.markdown(f"- {plain(line)}")
    transfer(profile)


def transfer(profile: engine.Profile) -> None:
    """The profile's kernel transfer: the ratios its GEMM efficiencies take on each
    accelerator and weight format, and the CSV; or why it has none."""
    a = profile.assumptions
    st.subheader(_("Kernel transfer of profile {profile}").format(profile=plain(profile.name)))
    csv = kc.transfer_csv(profile)
    if csv.empty:
        st.info(
            _(
                "Profile {profile} keeps one GEMM efficiency on every accelerator "
                "(kernel_curves = {stack}, reference {reference})."
            ).format(
                profile=plain(profile.name),
                stack=plain(a.kernel_curves),
                reference=plain(a.kernel_reference),
            )
        )
        return
    st.caption(
        _(
            "Profile {profile} was fitted on {reference}. On another accelerator its GEMMs "
            "and routed experts run at its efficiency × the ratio of the two accelerators' "
            "compute fractions in {stack}'s GEMM tables, and its weights stream at its "
            "bandwidth efficiency × the ratio of their memory fractions. Where a table is "
            "missing both are 1. docs/model.md, 'Kernel transfer'."
        ).format(
            profile=plain(profile.name),
            reference=plain(a.kernel_reference),
            stack=kc.STACK_LABELS.get(a.kernel_curves, a.kernel_curves),
        )
    )
    st.dataframe(kc.transfer_table(csv), hide_index=True, key="acc:transfer_table")
    download_csv(
        df=csv,
        filename=f"kernel_transfer_{profile.name}.csv",
        key="acc:transfer_csv",
        label=_("Download the kernel transfer (CSV)"),
    )
