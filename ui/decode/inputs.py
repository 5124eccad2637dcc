"""The serving page's own widgets: devices, tokens, profile, the config.json field and the
headline (the overrides of the profile's assumptions are ui/widgets/overrides.py, as on /plan and
/load). Each widget's key is `decode:<param>`, bound to the share link (ui.links.state);
number fields take their ranges from the link's declarations (ui/decode/link.py)."""

from __future__ import annotations

import streamlit as st

import engine
from ui.core import profiles
from ui.decode import figures as fl
from ui.decode import view as sv
from ui.links.params import MAX_VALUE_CHARS, Link
from ui.links.state import show_link_notes
from ui.widgets.cards import cards
from ui.widgets.pickers import batch_list_input, number_input, split_inputs
from ui.words.i18n import _
from ui.words.text import plain


def devices_inputs(link: Link) -> tuple[dict, object]:
    """Tensor- and pipeline-parallel degrees (devices = tp × pp), an MoE model's expert
    parallelism and attention DP inside them (Deployment keywords), and the slot under them
    where `show_fallback` says when the engine refused them."""
    left, right = st.columns(2)
    tp = number_input(link, "tp", _("TP (tensor-parallel devices)"), where=left)
    pp = number_input(link, "pp", _("PP (pipeline stages)"), where=right)
    ep, attention_dp = split_inputs(link)
    layout = {"tp": int(tp), "pp": int(pp), "ep": ep, "attention_dp": attention_dp}
    return layout, st.empty()


def show_fallback(slot, error: str | None, r: dict) -> None:
    """Beside the TP and PP fields: the placement the engine refused and what is shown (and
    written into the link) instead."""
    if error:
        text = _("{error} The link now holds tp={tp}, pp={pp}, ep={ep}, attention_dp=off.")
        slot.warning(text.format(error=plain(error), tp=r["tp"], pp=r["pp"], ep=r["ep"]), icon="⚠️")


def token_inputs(link: Link) -> tuple[int, int, int]:
    """(batch, input tokens, output tokens) per request of the static batch."""
    batch = number_input(link, "batch", _("Batch (concurrent sequences)"))
    left, right = st.columns(2)
    i = number_input(link, "input_tokens", _("Input tokens (prompt)"), where=left)
    o = number_input(link, "output_tokens", _("Output tokens"), where=right)
    return int(batch), int(i), int(o)


def curve_inputs(link: Link) -> tuple[list[int], list[int]]:
    """The curves' input lengths and batch sizes; a list that does not parse is named."""
    param = link["contexts"]
    text = st.text_input(
        _("Input tokens for the curves (comma-separated)"),
        key=link.key("contexts"),
        max_chars=MAX_VALUE_CHARS,
    )
    show_link_notes(link, "contexts")
    try:
        contexts = param.read(text)
    except ValueError as exc:
        contexts = param.default
        text = _("List not used: {reason}. Showing {value}.")
        st.error(text.format(reason=plain(exc), value=param.write(contexts)), icon="🚫")
    return contexts, batch_list_input(link)


def tutorial_input(link: Link) -> bool:
    return st.toggle(
        _("Also show the tutorial's one-step decode view"),
        key=link.key("tutorial"),
        help=_("engine.decode: one device, one decode step at context I + O (docs/model.md)."),
    )


def profile_input(link: Link) -> str:
    names, key = engine.profile_names(), link.key("profile")
    if st.session_state.get(key) not in names:
        st.session_state[key] = link["profile"].default
    return st.selectbox(
        _("Profile (assumptions)"),
        names,
        key=key,
        format_func=lambda n: profiles.picker_text(engine.get_profile(n)),
        help=_("A named set of efficiencies and overheads (docs/model.md, 'Serving model')."),
    )


def show_headline(r: dict, hw) -> None:
    """The fit verdict first, then the metric cards in rows."""
    verdict = plain(sv.fit_text(r, hw))
    if r["fits_in_memory"]:
        st.success(verdict, icon="✅")
    else:
        text = _("{verdict}. Every speed below is hypothetical (as if it fitted).")
        st.error(text.format(verdict=verdict), icon="🚫")
    cards(sv.headline(r))


def tutorial_view(model, hw, r: dict, overrides: dict) -> None:
    """The tutorial's one-step decode view (engine.decode: one device, the decode step at the
    request's last context I + O), labelled as such, under the serving model's figures."""
    st.subheader(_("Tutorial view: one decode step on one device"))
    context = r["input_tokens"] + r["output_tokens"]
    try:
        dep = engine.Deployment(
            model=model,
            hardware=hw,
            precision=r["precision"],
            kv_precision=r["kv_precision"],
            assumptions=engine.get_profile(r["profile"]).assumptions,
            overrides=overrides,
        )
        d = engine.decode(
            dep, batch_size=r["batch_size"], context=context, prompt=r["input_tokens"]
        )
    except ValueError as exc:
        st.error(_("Tutorial view not available: {reason}").format(reason=plain(exc)), icon="🚫")
        return
    st.caption(
        _(
            "engine.decode (docs/model.md, 'LLM decode'): weights + KV cache per step, one "
            "device (tp and pp ignored), the step at context {context} tokens, profile {profile}."
        ).format(context=f"{context:,}", profile=r["profile"])
    )
    tutorial = _("{label} (tutorial)")
    cards(
        [(tutorial.format(label=label), *rest) for label, *rest in fl.headline_metrics(d.as_dict())]
    )
    title = _("Roofline: {hardware} (tutorial view: prefill and one decode step)").format(
        hardware=hw.name
    )
    st.plotly_chart(fl.decode_roofline(d.as_dict(), hw.name, title), key="tutorial_roofline")
