import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("brier")
launch_gradio_widget(module)
