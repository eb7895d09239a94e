"""Prints the opset, the initializers (data type number, dims, raw_data
size) and the Cast nodes (to, saturate) of ONNX models, which the python
onnx here (1.12) can parse but not interpret for data types 17-22. With
--same-bytes NAME A B: whether initializer NAME has the same raw_data in
models A and B (B's may be renamed: the one of the same type and dims)."""
import os
import sys

import onnx


def load(path):
    with open(path, "rb") as f:
        return onnx.load_model_from_string(f.read())


if sys.argv[1] == "--same-bytes":
    name, a, b = sys.argv[2:5]
    want = [t for t in load(a).graph.initializer if t.name == name][0]
    got = [t for t in load(b).graph.initializer
           if t.data_type == want.data_type and list(t.dims) == list(want.dims)]
    same = any(t.raw_data == want.raw_data for t in got)
    print("%s: %s raw_data" % (name, "same" if same else "different"))
    sys.exit(0)

for path in sys.argv[1:]:
    model = load(path)
    opset = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    print("%s opset %d" % (os.path.basename(path), opset[0]))
    for t in model.graph.initializer:
        print("initializer %s data_type %d dims %s raw_data %d bytes"
              % (t.name, t.data_type, list(t.dims), len(t.raw_data)))
    for n in model.graph.node:
        if n.op_type == "Cast":
            attrs = {a.name: a.i for a in n.attribute}
            text = "Cast to %d" % attrs["to"]
            if "saturate" in attrs:
                text += " saturate %d" % attrs["saturate"]
            print(text)
