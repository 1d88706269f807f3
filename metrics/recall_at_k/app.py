import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("recall_at_k")
launch_gradio_widget(module)
