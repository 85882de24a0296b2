"""What the ``compare`` command's --json report says: each result's status
and the report's text."""
import json


def status_of(result):
    """PASS, WARNING (msprobe's middle tier), FAIL, or ERROR (not judged)."""
    return result.status.upper()


def json_text(results, standard):
    counts = {s: sum(status_of(r) == s for r in results)
              for s in ("PASS", "WARNING", "FAIL", "ERROR")}
    cases = []
    for r in results:
        case = r.as_dict()
        case["status"] = status_of(r)
        cases.append(case)
    report = {"standard": standard, "passed": bool(results) and counts["PASS"] == len(results),
              "counts": counts, "cases": cases}
    return json.dumps(report, indent=1, allow_nan=False) + "\n"
