#!/usr/bin/env bash
# `ferry check --html` rendered in a real browser: headless Chromium loads the report of the quickstart CNN, of
# a generated model with an unsupported custom-domain op (and hostile node names) and of a generated 1,100-node
# chain with three such ops, takes a screenshot and dumps the DOM after the page's script ran; the DOM must hold
# one element per node of `ferry check --json`, colored by verdict, with the details panel filled and no markup
# injected by node names. The problem table lists its rows by severity, the chain's three identical problems as
# one row of three; the large graph opens in the "problems only" view (the script hid every node that is neither
# a problem nor next to one), the small ones with every node shown.
# Usage: check_html_test.sh path/to/ferry     (exit 77 = skipped: no chromium or no /usr/bin/python3 with onnx)
# CHECK_HTML_KEEP=DIR keeps the reports, screenshots and DOM dumps in DIR.
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$CHROMIUM" ]; then
  echo "SKIP: chromium is not installed (scripts/setup.sh installs it)"; exit 77
fi
if ! /usr/bin/python3 -c "import onnx" 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 has no onnx module"; exit 77
fi

fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# Conv -> Relu -> com.example::Mystery (unknown domain: unsupported) -> Sigmoid; two names try to inject markup.
/usr/bin/python3 - "$TMP/custom.onnx" <<'EOF'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save
w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
nodes = [
    helper.make_node("Conv", ["x", "w"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"], name="<img src=x onerror=alert(1)>"),
    helper.make_node("Mystery", ["r"], ["m"], name="<script>alert(1)</script>", domain="com.example"),
    helper.make_node("Sigmoid", ["m"], ["y"], name="sig\"'&\\N"),
]
graph = helper.make_graph(nodes, "custom", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
                          producer_name="check_html_test")
model.ir_version = 8
save(model, sys.argv[1])
EOF

# Past the bounded-effort layout's size (1000 nodes): Relu x 1100 with com.example::Mystery at 300, 600 and 900.
/usr/bin/python3 - "$TMP/large.onnx" <<'EOF'
import sys
from onnx import TensorProto, helper, save
nodes, prev = [], "x"
for i in range(1100):
    mystery = i in (300, 600, 900)
    nodes.append(helper.make_node("Mystery" if mystery else "Relu", [prev], [f"v{i}"], name=f"n{i}",
                                  domain="com.example" if mystery else ""))
    prev = f"v{i}"
nodes.append(helper.make_node("Identity", [prev], ["y"], name="out"))
graph = helper.make_graph(nodes, "large", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
                          producer_name="check_html_test")
model.ir_version = 8
save(model, sys.argv[1])
EOF

chrome() {  # chrome OUT_PREFIX HTML [FRAGMENT]: screenshot + DOM dump (of HTML#FRAGMENT)
  local profile
  profile="$(mktemp -d)"
  local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
               --disable-component-update --disable-sync --disable-dev-shm-usage --hide-scrollbars
               --user-data-dir="$profile" --window-size=1400,1000)
  timeout 120 "$CHROMIUM" "${flags[@]}" --screenshot="$1.png" "file://$2" >"$1.screenshot.log" 2>&1
  timeout 120 "$CHROMIUM" "${flags[@]}" --dump-dom "file://$2${3:+#$3}" >"$1.dom.html" 2>"$1.dom.log"
  rm -rf "$profile"
}

for model in "$ROOT/models/quickstart_cnn.onnx" "$TMP/custom.onnx" "$TMP/large.onnx"; do
  name="$(basename "$model" .onnx)"
  out="$TMP/$name"
  "$FERRY" check "$model" --json --html "$out.html" >"$out.json" 2>"$out.err"
  rc=$?
  if [ "$rc" != 0 ] || [ ! -s "$out.html" ]; then
    fail "$name: ferry check --html exited $rc"; head -20 "$out.err"; continue
  fi
  # The quickstart CNN is all native: its DOM is dumped with a link to node 5, which the page must pin.
  chrome "$out" "$out.html" "$([ "$name" = quickstart_cnn ] && echo node=5)"
  size=$(stat -c %s "$out.png" 2>/dev/null || echo 0)
  if [ "$size" -lt 20000 ]; then
    fail "$name: screenshot missing or trivial ($size bytes)"; tail -5 "$out.screenshot.log"
  else
    echo "PASS $name: screenshot $size bytes"
  fi
  if /usr/bin/python3 - "$out.json" "$out.dom.html" "$out.png" "$name" <<'EOF'; then
import json, struct, sys
from html.parser import HTMLParser

report = json.load(open(sys.argv[1]))
dom = open(sys.argv[2], encoding="utf-8", errors="replace").read()
png = open(sys.argv[3], "rb").read(32)
model = sys.argv[4]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

class Dom(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.nodes, self.tags, self.details, self.rows, self.inputs = [], {}, {}, [], [], {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag == "tr" and "data-severity" in a:
            self.rows.append(a)
        if tag == "input" and "id" in a:
            self.inputs[a["id"]] = a
        node = a if "data-node" in a else None
        if node is not None:
            node["fills"] = []
            self.nodes.setdefault(node.get("data-index"), []).append(node)
        inside = [e for _, e in self.stack if isinstance(e, dict)]
        if inside and "fill" in a:
            inside[-1]["fills"].append(a["fill"].lower())
        if tag not in VOID and not tag.endswith("/"):
            self.stack.append((tag, node if node is not None else (("details",) if a.get("id") == "details" else None)))
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()
    def handle_endtag(self, tag):
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break
    def handle_data(self, data):
        if any(e == ("details",) for _, e in self.stack):
            self.details.append(data)

p = Dom()
p.feed(dom)
errors = []
want = report["nodes"]
if sum(len(v) for v in p.nodes.values()) != len(want):
    errors.append(f"{sum(len(v) for v in p.nodes.values())} elements with data-node, want {len(want)} nodes")
for i, n in enumerate(want):
    els = p.nodes.get(str(i), [])
    if len(els) != 1:
        errors.append(f"node {i} ({n['name']!r}): {len(els)} elements"); continue
    e = els[0]
    if e.get("data-node") != n["name"] or e.get("data-verdict") != n["verdict"]:
        errors.append(f"node {i}: data-node={e.get('data-node')!r} data-verdict={e.get('data-verdict')!r}, want "
                      f"{n['name']!r} {n['verdict']!r}")
    if e.get("id") != f"ferry_node_{i}":
        errors.append(f"node {i}: id {e.get('id')!r}")
    color = {"native": "#c6efce", "fallback": "#ffe08a", "unsupported": "#ffb3b3"}[n["verdict"]]
    if color not in e["fills"]:
        errors.append(f"node {i} ({n['verdict']}): fills {e['fills']}, want {color}")
details = " ".join(p.details)
# The problem table: worst first, one row per (op, verdict, layer, reason) with the count of its nodes.
order = {"error": 0, "slow": 1, "minor": 2, "info": 3}
levels = [order.get(r.get("data-severity"), 9) for r in p.rows]
if levels != sorted(levels) or 9 in levels:
    errors.append(f"problem rows not by severity: {[r.get('data-severity') for r in p.rows]}")
problem = {i for i, n in enumerate(want) if n["verdict"] in ("fallback", "unsupported")}
if sum(int(r.get("data-count", 0)) for r in p.rows if r.get("data-severity") != "info") != len(problem):
    errors.append(f"problem rows count {[r.get('data-count') for r in p.rows]}, want {len(problem)} nodes")
# The "problems only" view: on for the large graph (only problems and their neighbours left), off otherwise.
only = p.inputs.get("problems-only")
hidden = {int(i) for i, els in p.nodes.items() if "hidden" in els[0].get("class", "").split()}
if only is None or "neighbours" not in p.inputs:
    errors.append("no problems-only / neighbours control")
elif model == "large":
    producer = {o: i for i, n in enumerate(want) for o in n["outputs"] if o}
    keep = set(problem)
    for i, n in enumerate(want):
        for j in (producer[v] for v in n["inputs"] if v in producer):
            if i in problem:
                keep.add(j)
            if j in problem:
                keep.add(i)
    want_hidden = set(range(len(want))) - keep
    if "checked" not in only:
        errors.append("large graph: problems only is not the default")
    if hidden != want_hidden:
        errors.append(f"large graph: {len(hidden)} nodes hidden, want {len(want_hidden)} "
                      f"(shown: {sorted(set(range(len(want))) - hidden)[:20]}, want {sorted(keep)})")
    if len(p.rows) != 1 or p.rows[0].get("data-count") != "3" or p.rows[0].get("data-severity") != "error":
        errors.append(f"large graph: the 3 Mystery nodes are not one error row of 3: {p.rows}")
    if 'id="problems-note"' not in dom:
        errors.append("large graph: no note about the problems-only view")
elif "checked" in only or hidden:
    errors.append(f"{model}: problems only is on by default ({len(hidden)} nodes hidden)")
if model == "custom":
    bad = [n for n in want if n["op"] == "Mystery"]
    if not bad or bad[0]["verdict"] != "unsupported":
        errors.append("the com.example::Mystery node is not unsupported in --json")
    elif p.nodes.get(str(want.index(bad[0])), [{}])[0].get("data-verdict") != "unsupported":
        errors.append("the Mystery node is not drawn red")
    # The page script pins the first non-native node: the details panel shows its name, reason and remedy.
    if "<script>alert(1)</script>" not in details or bad[0]["remedy"] not in details:
        errors.append(f"details panel does not show the unsupported node: {details[:300]!r}")
    if p.tags.get("img", 0) != 0 or p.tags.get("script", 0) != 2:
        errors.append(f"markup injected by node names: {p.tags.get('img', 0)} img, {p.tags.get('script', 0)} script")
elif model == "large":
    # The first problem is pinned (and shown by the problems-only view).
    if "n300" not in details or "com.example" not in details:
        errors.append(f"details panel does not show the first Mystery node: {details[:300]!r}")
else:
    # Opened as report.html#node=5: the details panel shows node 5.
    if want[5]["name"] not in details or want[5]["kernel"] not in details:
        errors.append(f"#node=5 did not pin node 5 ({want[5]['name']!r}): {details[:300]!r}")
if p.tags.get("svg", 0) != 1:
    errors.append(f"{p.tags.get('svg', 0)} svg elements, want 1 (the Graphviz drawing)")
if png[:8] != b"\x89PNG\r\n\x1a\n":
    errors.append("screenshot is not a PNG")
else:
    w, h = struct.unpack(">II", png[16:24])
    if (w, h) != (1400, 1000):
        errors.append(f"screenshot is {w}x{h}, want 1400x1000")
for e in errors:
    print("  " + e)
print(f"{model}: {len(want)} nodes, {sum(len(v) for v in p.nodes.values())} node elements in the rendered DOM")
sys.exit(1 if errors else 0)
EOF
    echo "PASS $name: rendered DOM"
  else
    fail "$name: rendered DOM"; tail -5 "$out.dom.log"
  fi
done

if [ -n "${CHECK_HTML_KEEP:-}" ]; then
  mkdir -p "$CHECK_HTML_KEEP" && cp "$TMP"/*.html "$TMP"/*.png "$TMP"/*.json "$CHECK_HTML_KEEP"/ 2>/dev/null
fi
echo "$fails failed"
[ "$fails" = 0 ]
