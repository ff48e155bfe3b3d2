"""`import onnxruntime` resolving to lockstep, for running onnxruntime's own Python API tests against lockstep
(scripts/ort_api_tests.sh). Only what lockstep itself has is exported: a name onnxruntime has and lockstep lacks stays
missing, so the test that needs it fails."""

import lockstep as _lockstep

globals().update({name: getattr(_lockstep, name) for name in dir(_lockstep) if not name.startswith("_")})
