import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("das_ratio")
launch_gradio_widget(module)
