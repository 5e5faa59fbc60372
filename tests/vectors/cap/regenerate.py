"""Rewrite each vector's `expected` view from its input with the Python cap.

Run after an intended change to the cap or the salience data, then review the
diff: `PYTHONPATH=src python tests/vectors/cap/regenerate.py`. A new vector is a
JSON file holding name, tool, cap, ref, source, completeness, input (a real
output recorded from the tool) and must_keep (regexes for the lines an
engineer needs); this script fills in `expected`.
"""

import glob
import json
import os

from yarp.view.cap import cap_text

HERE = os.path.dirname(os.path.abspath(__file__))

for path in sorted(glob.glob(os.path.join(HERE, "*.json"))):
    with open(path, encoding="utf-8") as handle:
        vector = json.load(handle)
    view = cap_text(vector["input"].encode(), cap=vector["cap"], archive_ref=vector["ref"], source=vector["source"],
                    completeness=vector["completeness"])
    vector["expected"] = view.decode("utf-8")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(vector, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
