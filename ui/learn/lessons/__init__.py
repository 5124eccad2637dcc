"""The lessons as data, one module per chapter of the tutorial chain, by chapter number."""

from ui.learn.content import Lesson
from ui.learn.lessons import l00, l01, l02, l03, l04, l05, l06, l07, l08, l09, l10, l11, l12

LESSONS: dict[str, Lesson] = {
    m.LESSON.number: m.LESSON
    for m in (l00, l01, l02, l03, l04, l05, l06, l07, l08, l09, l10, l11, l12)
}
