use super::*;

use toolhost_guest::Toolbox;
use toolhost_guest::serde_json::{self, Value};

fn ok(expression: &str) -> String {
    match eval(expression) {
        Ok(v) => format_number(v),
        Err(e) => panic!("{expression:?} failed: {e}"),
    }
}

fn err(expression: &str) -> String {
    match eval(expression) {
        Ok(v) => panic!("{expression:?} gave {v}, expected an error"),
        Err(e) => e.to_string(),
    }
}

fn close(expression: &str, expected: f64) {
    let v = eval(expression).unwrap_or_else(|e| panic!("{expression:?} failed: {e}"));
    assert!(
        (v - expected).abs() <= 1e-12 * expected.abs().max(1.0),
        "{expression:?} = {v}, expected {expected}"
    );
}

#[test]
fn basic_arithmetic_and_precedence() {
    assert_eq!(ok("2 * (3 + 4)"), "14");
    assert_eq!(ok("1 + 2 * 3"), "7");
    assert_eq!(ok("(1 + 2) * 3"), "9");
    assert_eq!(ok("10 - 4 - 3"), "3");
    assert_eq!(ok("100 / 10 / 5"), "2");
    assert_eq!(ok("7 / 2"), "3.5");
    assert_eq!(ok("7 % 3"), "1");
    assert_eq!(ok("-7 % 3"), "-1");
    assert_eq!(ok("7.5 % 2"), "1.5");
    assert_eq!(ok("2 + 3 % 2"), "3");
    assert_eq!(ok("0.1 + 0.2"), "0.30000000000000004");
    assert_eq!(ok("  42  "), "42");
}

#[test]
fn power_is_right_associative_and_binds_tighter_than_unary_minus() {
    assert_eq!(ok("2 ^ 3 ^ 2"), "512");
    assert_eq!(ok("(2 ^ 3) ^ 2"), "64");
    assert_eq!(ok("-2^2"), "-4");
    assert_eq!(ok("(-2)^2"), "4");
    assert_eq!(ok("2^-1"), "0.5");
    assert_eq!(ok("2^-2^2"), "0.0625");
    assert_eq!(ok("2 ** 10"), "1024");
    assert_eq!(ok("3 * 2 ^ 2"), "12");
    assert_eq!(ok("(-8) ^ 3"), "-512");
    assert_eq!(ok("0 ^ 0"), "1");
}

#[test]
fn unary_signs() {
    assert_eq!(ok("-3"), "-3");
    assert_eq!(ok("+3"), "3");
    assert_eq!(ok("--3"), "3");
    assert_eq!(ok("-+-3"), "3");
    assert_eq!(ok("2 - -3"), "5");
    assert_eq!(ok("2 * -3"), "-6");
    assert_eq!(ok("-(2 + 3)"), "-5");
    assert_eq!(ok("-0"), "0");
}

#[test]
fn number_forms() {
    assert_eq!(ok("1.5e3"), "1500");
    assert_eq!(ok("2E-4"), "0.0002");
    assert_eq!(ok("1e+2"), "100");
    assert_eq!(ok(".5"), "0.5");
    assert_eq!(ok("5."), "5");
    assert_eq!(ok("007"), "7");
    assert_eq!(ok("1e308 * 1"), "1e308");
    assert_eq!(ok("1e-320"), "1e-320");
}

#[test]
fn unicode_operators() {
    assert_eq!(ok("6 × 7"), "42");
    assert_eq!(ok("84 ÷ 2"), "42");
    assert_eq!(ok("50 − 8"), "42");
    close("π", std::f64::consts::PI);
}

#[test]
fn constants() {
    close("pi", std::f64::consts::PI);
    close("e", std::f64::consts::E);
    close("tau", std::f64::consts::TAU);
    close("PI", std::f64::consts::PI);
    close("2 * pi", std::f64::consts::TAU);
    close("e ^ 2", std::f64::consts::E.powi(2));
}

#[test]
fn functions() {
    assert_eq!(ok("sqrt(16)"), "4");
    assert_eq!(ok("abs(-3.5)"), "3.5");
    assert_eq!(ok("min(3)"), "3");
    assert_eq!(ok("min(3, 1, 2)"), "1");
    assert_eq!(ok("max(3, 1, 2, -7)"), "3");
    assert_eq!(ok("round(2.5)"), "3");
    assert_eq!(ok("round(-2.5)"), "-3");
    assert_eq!(ok("round(3.14159, 2)"), "3.14");
    assert_eq!(ok("round(1234, -2)"), "1200");
    assert_eq!(ok("round(0.125, 2)"), "0.13");
    assert_eq!(ok("floor(-2.5)"), "-3");
    assert_eq!(ok("ceil(2.1)"), "3");
    assert_eq!(ok("trunc(-2.7)"), "-2");
    assert_eq!(ok("exp(0)"), "1");
    assert_eq!(ok("ln(e)"), "1");
    assert_eq!(ok("log10(1000)"), "3");
    assert_eq!(ok("log2(1024)"), "10");
    close("log(8, 2)", 3.0);
    close("log(100, 10)", 2.0);
    assert_eq!(ok("sin(0)"), "0");
    assert_eq!(ok("cos(0)"), "1");
    close("tan(pi / 4)", 1.0);
    close("asin(1)", std::f64::consts::FRAC_PI_2);
    close("acos(1)", 0.0);
    close("atan(1)", std::f64::consts::FRAC_PI_4);
    close("atan2(1, 0)", std::f64::consts::FRAC_PI_2);
    close("atan2(0, -1)", std::f64::consts::PI);
    assert_eq!(ok("pow(2, 10)"), "1024");
    assert_eq!(ok("hypot(3, 4)"), "5");
    assert_eq!(ok("SQRT(4)"), "2");
    assert_eq!(ok("max(1, sqrt(16), 2^2 + 1)"), "5");
    assert_eq!(ok("sqrt(sqrt(sqrt(256)))"), "2");
}

#[test]
fn result_formatting() {
    assert_eq!(format_number(14.0), "14");
    assert_eq!(format_number(-0.0), "0");
    assert_eq!(format_number(0.1 + 0.2), "0.30000000000000004");
    assert_eq!(format_number(1e300), "1e300");
    assert_eq!(format_number(1.5e-10), "1.5e-10");
    assert_eq!(format_number(-2.5e20), "-2.5e20");
    assert_eq!(format_number(9_007_199_254_740_992.0), "9007199254740992");
    assert_eq!(format_number(1e16), "1e16");
    assert_eq!(format_number(0.000_001), "0.000001");
    // The exponent form reads back as the same number.
    assert_eq!(eval(&format_number(1.234e-200)).unwrap(), 1.234e-200);
}

#[test]
fn division_and_modulo_by_zero() {
    assert_eq!(err("1 / 0"), "division by zero at position 3");
    assert_eq!(err("0 / 0"), "division by zero at position 3");
    assert_eq!(err("1 / (2 - 2)"), "division by zero at position 3");
    assert_eq!(err("5 % 0"), "modulo by zero at position 3");
    assert!(err("0 ^ -1").starts_with("division by zero"));
    assert!(err("pow(0, -2)").starts_with("division by zero"));
}

#[test]
fn results_that_are_not_real_numbers() {
    let e = err("sqrt(-1)");
    assert!(
        e.starts_with("result is not a real number: sqrt(-1)"),
        "{e}"
    );
    assert!(err("ln(0)").starts_with("result is not a real number: ln(0)"));
    assert!(err("log10(-5)").starts_with("result is not a real number"));
    assert!(err("log2(0)").starts_with("result is not a real number"));
    assert!(err("log(8, 1)").starts_with("result is not a real number"));
    assert!(err("log(8, -2)").starts_with("result is not a real number"));
    assert_eq!(
        err("asin(2)"),
        "result is not a real number: asin(2) needs an argument from -1 to 1 (at position 1)"
    );
    assert!(err("acos(-1.5)").contains("from -1 to 1"));
    assert_eq!(
        err("(-8) ^ 0.5"),
        "result is not a real number: (-8) ^ 0.5 raises a negative number to a fractional power (at position 6)"
    );
}

#[test]
fn overflow_is_too_large() {
    let e = err("10 ^ 400");
    assert!(e.starts_with("result is too large: 10 ^ 400"), "{e}");
    assert!(err("exp(1000)").starts_with("result is too large: exp(1000)"));
    assert!(err("1e308 * 10").starts_with("result is too large"));
    assert!(err("1e308 + 1e308").starts_with("result is too large"));
    assert!(err("-1e308 - 1e308").starts_with("result is too large"));
    assert!(err("1e308 / 1e-308").starts_with("result is too large"));
    assert!(err("hypot(1.5e308, 1.5e308)").starts_with("result is too large"));
    assert_eq!(
        err("1e400"),
        "the number '1e400' at position 1 is too large"
    );
}

#[test]
fn syntax_errors_name_position_and_expectation() {
    assert_eq!(
        err("2 + * 3"),
        "syntax error at position 5: expected a number, '(' or a function name, found '*'"
    );
    assert_eq!(
        err("2 +"),
        "syntax error at position 4: expected a number, '(' or a function name, found the end of the expression"
    );
    assert_eq!(
        err("(1 + 2"),
        "syntax error at position 7: expected an operator or ')', found the end of the expression"
    );
    assert_eq!(
        err("1 + 2)"),
        "syntax error at position 6: expected an operator or the end of the expression, found ')'"
    );
    assert_eq!(
        err("2 3"),
        "syntax error at position 3: expected an operator or the end of the expression, found the number '3'"
    );
    assert_eq!(
        err("2pi"),
        "syntax error at position 2: expected an operator or the end of the expression, found 'pi'"
    );
    assert_eq!(
        err("max(1 2)"),
        "syntax error at position 7: expected an operator, ',' or ')', found the number '2'"
    );
    assert!(err("max(1,)").starts_with("syntax error at position 7"));
    assert!(err("()").starts_with("syntax error at position 2"));
    assert!(err("1 $ 2").contains("found '$'"));
    assert!(err("1.2.3").contains("second '.'"));
    assert!(err(".").starts_with("syntax error at position 1"));
    assert!(err("1e").contains("digits after the exponent"));
    assert!(err("1e+").contains("digits after the exponent"));
    assert!(err("2 = 2").contains("found '='"));
    assert!(err("1 +\u{0} 2").contains("found '\\0'"));
}

#[test]
fn syntax_errors_take_priority_over_arithmetic_errors() {
    assert!(err("1 / 0 +").starts_with("syntax error"));
    assert!(err("sqrt(-1) )").starts_with("syntax error"));
    // Among arithmetic errors, the first one is reported.
    assert!(err("1 / 0 + sqrt(-1)").starts_with("division by zero"));
    assert!(err("sqrt(-1) + 1 / 0").starts_with("result is not a real number"));
}

#[test]
fn empty_expression() {
    assert_eq!(err(""), "the expression is empty");
    assert_eq!(err(" \t\n "), "the expression is empty");
}

#[test]
fn names() {
    assert!(
        err("foo(2)").starts_with("unknown function 'foo' at position 1 (functions: sqrt, abs,")
    );
    assert!(err("x + 1").starts_with("unknown name 'x' at position 1"));
    assert!(err("1 + sqrt").contains("'sqrt' is a function"));
    assert!(err("pi(2)").contains("'pi' is a constant, not a function"));
}

#[test]
fn wrong_argument_counts() {
    assert_eq!(
        err("sqrt()"),
        "sqrt takes 1 argument, got 0 (at position 1)"
    );
    assert_eq!(
        err("sqrt(1, 2)"),
        "sqrt takes 1 argument, got 2 (at position 1)"
    );
    assert_eq!(
        err("pow(2)"),
        "pow takes 2 arguments, got 1 (at position 1)"
    );
    assert_eq!(
        err("max()"),
        "max takes at least 1 argument, got 0 (at position 1)"
    );
    assert!(err("log(100)").contains("use ln(x) for the natural logarithm"));
    assert!(err("round(1, 2, 3)").contains("round takes 1 or 2 arguments"));
    assert!(err("round(1.5, 0.5)").contains("whole number of digits"));
    assert!(err("round(1.5, 16)").contains("from -15 to 15"));
}

#[test]
fn length_limit() {
    let long = "1+".repeat(MAX_LENGTH / 2) + "1";
    assert!(err(&long).starts_with("the expression is too long: 10001 characters"));
    let fits = "1+".repeat(MAX_LENGTH / 2 - 1) + "1";
    assert_eq!(ok(&fits), "5000");
}

#[test]
fn depth_limit() {
    // Well inside the limit.
    let nested = format!("{}1{}", "(".repeat(100), ")".repeat(100));
    assert_eq!(ok(&nested), "1");
    // Far beyond it: a clear error, not a stack overflow.
    let deep = format!("{}1{}", "(".repeat(4000), ")".repeat(4000));
    assert!(err(&deep).starts_with("the expression is nested too deeply"));
    let minus = format!("{}1", "-".repeat(5000));
    assert!(err(&minus).starts_with("the expression is nested too deeply"));
    let powers = format!("{}2", "2^".repeat(4000));
    assert!(err(&powers).starts_with("the expression is nested too deeply"));
    let calls = format!("{}1{}", "abs(".repeat(1500), ")".repeat(1500));
    assert!(err(&calls).starts_with("the expression is nested too deeply"));
    let unclosed = "(".repeat(9000);
    assert!(err(&unclosed).starts_with("the expression is nested too deeply"));
}

#[test]
fn deep_nesting_at_the_limit_runs_on_a_small_stack() {
    // A guest has about 1 MiB of stack; the deepest accepted expression must
    // fit comfortably. Parentheses use the most stack per level.
    let run = |expression: String| {
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || eval(&expression))
            .unwrap()
            .join()
            .unwrap()
    };
    let parens = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
    assert_eq!(run(parens(MAX_DEPTH - 1)), Ok(1.0));
    assert_eq!(
        run(parens(MAX_DEPTH)),
        Err(EvalError::TooDeep {
            position: MAX_DEPTH + 1
        })
    );
    let calls = format!("{}1{}", "abs(-".repeat(60), ")".repeat(60));
    assert_eq!(run(calls), Ok(1.0));
}

#[test]
fn long_flat_expressions_are_fine() {
    let sum = "1 + ".repeat(2000) + "1";
    assert_eq!(ok(&sum), "2001");
    let product = "1 * ".repeat(2000) + "7";
    assert_eq!(ok(&product), "7");
}

#[test]
fn no_panics_on_odd_inputs() {
    let inputs = [
        "",
        "(",
        ")",
        ",",
        "^",
        "**",
        "*",
        "1**",
        "1 ^",
        "e^",
        "e^^2",
        "1e5e5",
        "1..2",
        "max(,)",
        "min(",
        "sqrt(",
        "sqrt)",
        "((((",
        "))))",
        "1,2",
        "é",
        "ñ(1)",
        "_",
        "__x",
        "9999999999999999999999999999999999999999",
        "0.0000000000000000000000000000001",
        "\u{feff}1",
        "1\u{200b}",
        "🙂",
        "1 🙂 2",
        "-",
        "+",
        "--",
        "1-",
        "2^-",
        "log(,)",
        "round(1e308, 15)",
        "round(1e-308, -15)",
        "atan2(0, 0)",
        "pow(-8, 1/3)",
    ];
    for input in inputs {
        let _ = eval(input);
    }
    assert_eq!(ok("round(1e308, 15)"), "1e308");
    assert_eq!(ok("atan2(0, 0)"), "0");
}

#[test]
fn tool_function_and_toolbox() {
    let result = evaluate(Evaluate {
        expression: "2 * (3 + 4)".into(),
    });
    assert_eq!(result.unwrap(), "14");

    let toolbox = Toolbox::new().tool("evaluate", evaluate);
    assert_eq!(
        toolbox.call("evaluate", r#"{"expression": "0.1 + 0.2"}"#),
        Ok("0.30000000000000004".into())
    );
    assert_eq!(
        toolbox.call("evaluate", r#"{"expression": "1/0"}"#),
        Err("division by zero at position 2".into())
    );
    let e = toolbox
        .call("evaluate", r#"{"expression": "1", "x": 2}"#)
        .unwrap_err();
    assert!(e.contains("unknown field `x`"), "{e}");

    let info: Value = serde_json::from_str(&toolbox.tool_info()).unwrap();
    let function = &info[0]["function"];
    assert_eq!(function["name"], "evaluate");
    let description = function["description"].as_str().unwrap();
    assert!(description.starts_with("Evaluates an arithmetic expression"));
    for word in ["sqrt", "atan2", "hypot", "log(x, base)", "-2^2 = -4"] {
        assert!(description.contains(word), "description lacks {word}");
    }
    let parameters = &function["parameters"];
    assert_eq!(parameters["required"], serde_json::json!(["expression"]));
    assert_eq!(parameters["properties"]["expression"]["type"], "string");
    assert_eq!(parameters["additionalProperties"], false);
}
