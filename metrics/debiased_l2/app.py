import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("debiased_l2")
launch_gradio_widget(module)
