"""Type names, NodeArg and ModelMetadata as ONNX Runtime reports them."""

# ONNX TensorProto.DataType value -> the element name in ONNX Runtime's type strings ("tensor(float)").
_ELEMENT_NAMES = {
    1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string", 9: "bool",
    10: "float16", 11: "double", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16",
    17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz", 21: "uint4", 22: "int4",
    23: "float4e2m1", 24: "float8e8m0", 25: "uint2", 26: "int2",
}


def type_string(kind, dtype, element_kind=""):
    """ONNX Runtime's spelling of a value's type: tensor(float), seq(tensor(int64)), optional(tensor(float)),
    optional(seq(tensor(float)))."""
    element = "tensor(%s)" % _ELEMENT_NAMES.get(dtype, "undefined")
    if kind == "sequence":
        return "seq(%s)" % element
    if kind == "optional":
        return "optional(%s)" % ("seq(%s)" % element if element_kind == "sequence" else element)
    if kind == "map":
        return "map(%s)" % _ELEMENT_NAMES.get(dtype, "undefined")
    return element


class NodeArg:
    """A graph input or output: `name`, `type` ("tensor(float)") and `shape` (ints, symbolic dim names, None for
    an unknown dim; [] when the rank is unknown), as onnxruntime.NodeArg."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type, shape):  # noqa: A002 (ORT's field name)
        self.name = name
        self.type = type
        self.shape = shape

    @classmethod
    def _from_info(cls, info):
        shape = info["shape"]
        kind = type_string(info["kind"], info["dtype"], info.get("element_kind", ""))
        return cls(info["name"], kind, [] if shape is None else list(shape))

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)

    def __eq__(self, other):
        return isinstance(other, NodeArg) and (self.name, self.type, self.shape) == (other.name, other.type,
                                                                                     other.shape)


class ModelMetadata:
    """The model's metadata, as onnxruntime.ModelMetadata: producer_name, graph_name, graph_description, domain,
    description, version, custom_metadata_map (metadata_props)."""

    def __init__(self, d):
        self.producer_name = d["producer_name"]
        self.producer_version = d["producer_version"]
        self.graph_name = d["graph_name"]
        self.graph_description = d["graph_description"]
        self.domain = d["domain"]
        self.description = d["description"]
        self.version = d["version"]
        self.custom_metadata_map = dict(d["custom_metadata_map"])

    def __repr__(self):
        return "ModelMetadata(producer_name=%r, graph_name=%r, version=%r)" % (self.producer_name, self.graph_name,
                                                                               self.version)
