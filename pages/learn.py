"""Lessons: the MLSys·im tutorial chain (chapters 00–05, 06 and 11) as live lessons.

Each lesson: the chapter's question, its key experiment live (the main pages' figure builders,
the engine's numbers), the tutorial's published figures beside ours with why they differ,
exercises the page checks, and links that open the full pages with the lesson's scenario.
`/learn?lesson=N` opens chapter N; every text is translated (ui.words.i18n), the lessons' text
lives as data (ui/learn/lessons/)."""

import streamlit as st

from ui.core import frame
from ui.core.frame import ROOT
from ui.learn import render
from ui.learn.experiments import EXPERIMENTS
from ui.learn.lessons import LESSONS
from ui.learn.link import PAGE, declare, lesson_of
from ui.links import state

frame.setup_page("Lessons")

# --- inputs -----------------------------------------------------------------
cat = frame.catalog()
number = lesson_of(state.raw_query(), st.session_state.get(render.PICKER))
link = declare(number)
warnings = state.bind(link)
number = render.picker(LESSONS)
lesson = LESSONS[number]

# --- the lesson: question, experiment (engine, charts), figures, exercises ---
render.header(lesson)
frame.show_catalog_notes(cat)
frame.show_param_warnings(warnings)
outcome = EXPERIMENTS[number](link, cat)
render.published(lesson, outcome)
render.exercises(lesson, outcome)
render.pages(outcome, ROOT)
query = state.publish(link)
frame.share_link(PAGE, query)
render.footer(lesson)
