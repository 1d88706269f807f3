"""The ``evaluate`` metric modules of dialshift, one folder each (``<name>/<name>.py``, its README card, a Gradio
``app.py`` and ``requirements.txt`` for its Hub Space). Installed as the ``dialshift_metrics`` package, so
``evaluate.load(dialshift.metric_path("ece"))`` works from any folder."""
