"""Generates the Python client of Lore from proto/ with grpcio-tools:
`python tests/python/generate.py OUT_DIR`, then put OUT_DIR on PYTHONPATH
and `from lore.v1 import actions_pb2_grpc`."""

import importlib.resources
import pathlib
import sys

from grpc_tools import protoc

repository = pathlib.Path(__file__).resolve().parents[2]
out = sys.argv[1]
include = str(importlib.resources.files("grpc_tools") / "_proto")
protos = sorted(str(path.relative_to(repository / "proto")) for path in (repository / "proto/lore/v1").glob("*.proto"))
arguments = ["protoc", "-I" + str(repository / "proto"), "-I" + include, "--python_out=" + out, "--grpc_python_out=" + out]
sys.exit(protoc.main(arguments + protos))
