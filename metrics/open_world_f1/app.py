import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("open_world_f1")
launch_gradio_widget(module)
