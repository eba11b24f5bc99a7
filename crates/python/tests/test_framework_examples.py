"""The frameworks' documented usages, unchanged apart from the import line."""

from toolhost import Tool, ToolController, ToolManager


class SearchTool(Tool):
    def __call__(self, tool_name: str, arguments: dict) -> str:
        query = arguments.get('query', '')
        return f'搜索结果：{query}'

    def tool_info(self):
        return {'type': 'function', 'function': {'name': 'search', 'description': '搜索网络信息。',
                'parameters': {'type': 'object', 'properties': {'query': {'type': 'string', 'description': '搜索查询。'}},
                               'required': ['query']}}}


class CalculatorTool(Tool):
    def __call__(self, tool_name: str, arguments: dict) -> str:
        return str(arguments['a'] + arguments['b'])

    def tool_info(self):
        return {'type': 'function', 'function': {'name': 'calculator', 'description': 'Adds a and b.',
                'parameters': {'type': 'object', 'properties': {'a': {'type': 'number'}, 'b': {'type': 'number'}},
                               'required': ['a', 'b']}}}


search_tool = SearchTool()
calculator_tool = CalculatorTool()
tool_call = {'id': 'call_1', 'type': 'function', 'function': {'name': 'search', 'arguments': '{"query": "Python 教程"}'}}


def test_list_of_tools():
    manager = ToolManager([search_tool, calculator_tool])
    assert manager.names() == ['search', 'calculator']
    assert manager(tool_call) == '搜索结果：Python 教程'


def test_dict_of_tools():
    manager = ToolManager({'search': search_tool, 'calc': calculator_tool})
    assert manager.names() == ['search', 'calc']
    assert manager(tool_call) == '搜索结果：Python 教程'
    add = {'id': 'c2', 'type': 'function', 'function': {'name': 'calc', 'arguments': '{"a": 2, "b": 3}'}}
    assert manager(add) == '5'


def test_register():
    manager = ToolManager(); manager.register(search_tool); manager.register(calculator_tool)
    assert manager.names() == ['search', 'calculator']
    assert manager(tool_call) == '搜索结果：Python 教程'


def test_tool_infos_for_the_api_request():
    manager = ToolManager([search_tool, calculator_tool])
    assert manager.tool_infos() == [search_tool.tool_info(), calculator_tool.tool_info()]


def test_controller_rules_repr():
    controller = ToolController(default_mode="deactivate", rules=[{"mode": "activate", "pattern": "math_*"},
                                                                  {"mode": "deactivate", "pattern": "calc_*"}])
    assert repr(controller.rules) == ("[ToolControlPattern(mode='activate', pattern='math_*'), "
                                      "ToolControlPattern(mode='deactivate', pattern='calc_*')]")
    assert [(r.mode, r.pattern) for r in controller.rules] == [('activate', 'math_*'), ('deactivate', 'calc_*')]


def test_first_matching_rule_wins():
    controller = ToolController(default_mode="deactivate", rules=[{"mode": "activate", "pattern": "math_*"},
                                                                  {"mode": "deactivate", "pattern": "math_add"}])
    assert controller.check_tool_status("math_add") is True


def test_dynamic_management_with_a_manager():
    controller = ToolController(default_mode="deactivate")
    tool_manager = ToolManager(tools=[], tool_controller=controller)
    controller.activate_tool("text_translator"); controller.deactivate_tool("math_complex")
    assert (controller.check_tool_status("text_translator"), controller.check_tool_status("math_complex")) == (True, False)
    assert tool_manager.tool_controller is controller


def test_filter_tool_list():
    names = [t["name"] for t in ToolController(default_mode="deactivate", rules=[{"mode": "activate", "pattern": "math_*"}])
             .filter_tool_list([{"name": "math_add"}, {"name": "math_subtract"}, {"name": "text_translate"}])]
    assert names == ['math_add', 'math_subtract']


def test_rollout_loop():
    manager = ToolManager([search_tool, calculator_tool])
    message = {"role": "assistant", "content": None, "tool_calls": [
        tool_call,
        {'id': 'call_2', 'type': 'function', 'function': {'name': 'calculator', 'arguments': '{"a": 1, "b": 41}'}},
        {'id': 'call_3', 'type': 'function', 'function': {'name': 'nope', 'arguments': '{}'}},
    ]}
    messages = [message]
    for call in message["tool_calls"]:
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": manager(call)})
    assert [m["content"] for m in messages[1:3]] == ['搜索结果：Python 教程', '42']
    assert messages[3]["content"].startswith("Error: ")
    assert "nope" in messages[3]["content"]
