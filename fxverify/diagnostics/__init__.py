"""Diagnostics: the code registry (``codes``), the model (``model``) and renderers (``render``)."""
