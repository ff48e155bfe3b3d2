"""get_name() for onnxruntime's Python tests: the path of a model in the test data directory that
scripts/ort_api/testdata.py writes (ORT_API_TESTDATA)."""

import os


def get_name(name):
    if os.path.exists(name):
        return name
    if os.path.exists(os.path.join("testdata", name)):  # relative, as onnxruntime's helper returns it
        return os.path.join("testdata", name)
    path = os.path.join(os.environ["ORT_API_TESTDATA"], name)
    if os.path.exists(path):
        return path
    raise FileNotFoundError(f"Unable to find '{name}' in {os.environ['ORT_API_TESTDATA']} (not reconstructed)")
