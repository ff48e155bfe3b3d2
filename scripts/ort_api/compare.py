"""Runs onnxruntime's Python API test file twice, on onnxruntime and on lockstep (through shim/), with the test data
of testdata.py, and prints how many tests pass on each and which pass on onnxruntime but not on lockstep, with the
first line of why.

    python3 scripts/ort_api/compare.py PATH/TO/onnxruntime_test_python.py
"""

import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def one_line(text):
    return re.sub(r"\s+", " ", text)


def run(test_file, pythonpath, workdir, data, report):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(pythonpath), "ORT_API_TESTDATA": data}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", report,
                    "-o", "junit_family=xunit1", test_file], cwd=workdir, env=env, capture_output=True, text=True)
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        problem = next((c for c in case if c.tag in ("failure", "error", "skipped")), None)
        reason = "" if problem is None else (problem.get("message") or "").strip().splitlines()[:1]
        outcomes[case.get("name")] = ("passed" if problem is None else problem.tag, reason[0] if reason else "")
    return outcomes


def main(test_file):
    test_file = os.path.abspath(test_file)
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for runtime, path in [("onnxruntime", [HERE]),
                              ("lockstep", [os.path.join(HERE, "shim"), os.path.join(REPO, "python"), HERE])]:
            # Each run gets its own copy in ./testdata, where onnxruntime's tests look (some build paths from the
            # working directory).
            workdir = os.path.join(tmp, runtime)
            data = os.path.join(workdir, "testdata")
            subprocess.run([sys.executable, os.path.join(HERE, "testdata.py"), data], check=True)
            results[runtime] = run(test_file, path, workdir, data, os.path.join(tmp, runtime + ".xml"))
    ort, ours = results["onnxruntime"], results["lockstep"]
    passing = sorted(n for n, (o, _) in ort.items() if o == "passed")
    both = [n for n in passing if ours.get(n, ("missing",))[0] == "passed"]
    print(f"tests: {len(ort)}; passing on onnxruntime CPU: {len(passing)}; of those passing on lockstep: {len(both)} "
          f"({100.0 * len(both) / max(len(passing), 1):.1f}%); passing on lockstep overall: "
          f"{sum(o == 'passed' for o, _ in ours.values())}")
    for name in passing:
        if name not in both:
            outcome, reason = ours.get(name, ("missing", ""))
            print(f"  lockstep {outcome}: {name}: {one_line(reason)[:160]}")
    for name in sorted(n for n, (o, _) in ort.items() if o != "passed"):
        print(f"  onnxruntime {ort[name][0]} (not counted): {name}: {one_line(ort[name][1])[:120]}")


if __name__ == "__main__":
    main(sys.argv[1])
