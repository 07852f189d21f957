"""The custom-painted timeline: data prepared for fast lookups (model) and the widget."""

from marlin_desk.gui.timeline.model import TimelineData
from marlin_desk.gui.timeline.widget import TimelineWidget

__all__ = ["TimelineData", "TimelineWidget"]
