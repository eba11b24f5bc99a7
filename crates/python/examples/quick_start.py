from toolhost import ToolManager, load_module

manager = ToolManager([load_module("calc.wasm")])    # tools calc_evaluate, ...
answer = manager({"id": "call_1", "type": "function",
                  "function": {"name": "calc_evaluate", "arguments": '{"expression": "6*7"}'}})
assert answer == "42"
