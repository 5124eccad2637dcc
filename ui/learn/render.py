"""The lessons page's parts, common to every lesson: the lesson picker, the question, the
tutorial's figures beside ours, the exercises the page checks, and the full pages that open
the lesson's scenario. Every text goes through ui.words.i18n; numbers arrive formatted.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.core.downloads import download_csv
from ui.learn.content import Exercise, Lesson, Outcome
from ui.learn.link import NUMBERS, PAGE
from ui.words import i18n
from ui.words.format import fmt
from ui.words.i18n import _

SOURCE = "harvard-edge/cs249r_book, mlsysim/docs/tutorials/"
PICKER = f"{PAGE}:lesson"


def _changed() -> None:
    """Another lesson: forget the last one's widgets and its link (not the language)."""
    for key in [k for k in st.session_state if str(k).startswith(f"{PAGE}:") and k != PICKER]:
        del st.session_state[key]
    st.query_params.from_dict({"lesson": st.session_state[PICKER], **i18n.link_value()})


def picker(lessons: dict[str, Lesson]) -> str:
    """The lesson picker (`learn:lesson`, seeded from the link by ui.links.state.bind)."""
    titles = {n: f"{int(n):02d} · {_(lessons[n].title)}" for n in NUMBERS}  # shown now
    return st.selectbox(
        _("Lesson"), NUMBERS, key=PICKER, format_func=titles.__getitem__, on_change=_changed
    )


def header(lesson: Lesson) -> None:
    st.title(_("Lesson {number}: {title}").format(number=lesson.number, title=_(lesson.title)))
    st.markdown(_(lesson.question))
    st.subheader(_("The experiment"))
    st.markdown(_(lesson.experiment))


def published(lesson: Lesson, out: Outcome) -> None:
    """Each figure the chapter publishes beside ours, and why they agree or differ (as CSV
    too)."""
    st.subheader(_("The tutorial's figures and ours"))
    rows = []
    for p in lesson.published:
        why = _(p.why).format(**out.values)
        tutorial, ours = _(p.tutorial), out.ours[p.key]
        with st.container(border=True):
            st.markdown(f"**{_(p.label)}**")
            st.markdown(
                _("Tutorial: {tutorial}  \nOurs: **{ours}**").format(tutorial=tutorial, ours=ours)
            )
            st.caption(why)
        rows.append({"figure": _(p.label), "tutorial": tutorial, "ours": ours, "why": why})
    name = f"lesson_{lesson.number}_tutorial_vs_ours.csv"
    download_csv(pd.DataFrame(rows), name, f"{PAGE}:csv")


def _answer_text(exercise: Exercise, answer: float) -> str:
    if exercise.tolerance == 0:
        return fmt(round(answer), exercise.unit)
    return fmt(answer, exercise.unit)


def _number(lesson: Lesson, e: Exercise, answer: float) -> None:
    whole = e.tolerance == 0
    if whole:
        note = _("(a whole number)")
    else:
        note = _("(checked to within ±{tolerance})").format(tolerance=fmt(e.tolerance, e.unit))
    given = st.number_input(
        f"{_(e.prompt)} {note}",
        value=None,
        step=1 if whole else 0.1,
        format=None if whole else "%.2f",
        key=f"{PAGE}:{lesson.number}:{e.key}",
    )
    if given is not None:
        _verdict(abs(given - answer) <= e.tolerance + 1e-9, e, _answer_text(e, answer))


def _choice(lesson: Lesson, e: Exercise, answer: float) -> None:
    shown = [_(c) for c in e.choices]  # translated now, not when the widget is read back
    given = st.radio(
        _(e.prompt),
        range(len(e.choices)),
        index=None,
        format_func=shown.__getitem__,
        key=f"{PAGE}:{lesson.number}:{e.key}",
    )
    if given is not None:
        _verdict(given == int(answer), e, _(e.choices[int(answer)]))


def _verdict(right: bool, e: Exercise, answer: str) -> None:
    if right:
        st.success(_("Right: the engine gives {answer}.").format(answer=answer), icon="✅")
    else:
        st.error(_("Not yet. Hint: {hint}").format(hint=_(e.hint)), icon="💡")


def exercises(lesson: Lesson, out: Outcome) -> None:
    """The "try it" exercises; each answer is checked against the engine's figure."""
    st.subheader(_("Try it"))
    for e in lesson.exercises:
        with st.container(border=True):
            (_choice if e.choices else _number)(lesson, e, out.answers[e.key])


def pages(out: Outcome, root) -> None:
    """Links that open the full pages with this lesson's scenario (and the CLI command)."""
    st.subheader(_("Open the full page"))
    for label, path, query in out.pages:
        if (root / path).exists():
            st.page_link(path, label=_(label), icon="↗️", query_params=query | i18n.link_value())
    if out.command:
        st.caption(_("The same scenario on the command line:"))
        st.code(out.command, language="bash", wrap_lines=True)


def footer(lesson: Lesson) -> None:
    st.subheader(_("Take-away"))
    st.markdown(_(lesson.takeaway))
    st.caption(
        _("Source: the MLSys·im tutorial, {source}. Numbers: this app's engine.").format(
            source=SOURCE + lesson.source
        )
    )
