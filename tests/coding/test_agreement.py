"""Agreement statistics checked against values worked out by hand, not by calling the libraries
the module wraps: an independent check that codes reach sklearn, statsmodels and krippendorff in
the right shape."""

import json

import pytest

from faithlens.coding.agreement import Agreement, PairKappa, agreement, all_agree, confusion, per_code


def _two_coders_ten_units() -> dict[str, dict[str, str]]:
    # 2x2 table (rows = a, columns = b): yes/yes 4, yes/no 1, no/yes 2, no/no 3.
    pairs = [("yes", "yes")] * 4 + [("yes", "no")] + [("no", "yes")] * 2 + [("no", "no")] * 3
    return {f"u{i}": {"a": first, "b": second} for i, (first, second) in enumerate(pairs)}


def test_cohen_kappa_two_coders_2x2():
    result = agreement(_two_coders_ten_units())
    po = (4 + 3) / 10  # agreeing units
    pe = (5 / 10) * (6 / 10) + (5 / 10) * (4 / 10)  # a: 5 yes 5 no; b: 6 yes 4 no -> 0.5
    assert result.pairs == (PairKappa("a", "b", 10, pytest.approx((po - pe) / (1 - pe))),)
    assert result.pairs[0].kappa == pytest.approx(0.4, abs=1e-12)
    assert (result.coders, result.units, result.complete) == (("a", "b"), 10, 10)
    assert result.pct_all_agree == pytest.approx(70.0)


def test_fleiss_kappa_three_coders_complete():
    codes = {
        "u1": {"a": "x", "b": "x", "c": "x"},
        "u2": {"a": "x", "b": "x", "c": "y"},
        "u3": {"a": "y", "b": "y", "c": "y"},
        "u4": {"a": "x", "b": "y", "c": "y"},
        "u5": {"a": "x", "b": "x", "c": "x"},
    }
    result = agreement(codes)
    n = 3  # raters per unit; P_i = (sum_j n_ij^2 - n) / (n (n - 1))
    p_i = [(9 - n) / 6, (4 + 1 - n) / 6, (9 - n) / 6, (1 + 4 - n) / 6, (9 - n) / 6]  # 1, 1/3, 1, 1/3, 1
    p_bar = sum(p_i) / 5  # 11/15
    p_x, p_y = (3 + 2 + 0 + 1 + 3) / 15, (0 + 1 + 3 + 2 + 0) / 15  # 0.6, 0.4
    pe_bar = p_x**2 + p_y**2  # 0.52
    assert result.fleiss_kappa == pytest.approx((p_bar - pe_bar) / (1 - pe_bar), abs=1e-12)
    assert result.fleiss_kappa == pytest.approx(4 / 9, abs=1e-12)
    assert result.complete == 5
    assert result.pct_all_agree == pytest.approx(100 * 3 / 5)  # u1, u3, u5 unanimous
    assert [(pair.a, pair.b, pair.n) for pair in result.pairs] == [("a", "b", 5), ("a", "c", 5), ("b", "c", 5)]


def _missing_codes() -> dict[str, dict[str, str]]:
    return {
        "u1": {"A": "p", "B": "p", "C": "p"},
        "u2": {"A": "p", "B": "q"},
        "u3": {"A": "q", "B": "q", "C": "q"},
        "u4": {"A": "q", "C": "r"},
        "u5": {"A": "r", "B": "r", "C": "q"},
        "u6": {"A": "p"},  # a single code: not pairable, must not count
        "u7": {"B": "r", "C": "r"},
    }


def test_krippendorff_alpha_nominal_with_missing_codes():
    # Coincidence matrix: each ordered pair of codes within a unit adds 1 / (m_u - 1).
    # u1 ppp: o_pp += 6 * 1/2 = 3; u2 pq: o_pq, o_qp += 1; u3 qqq: o_qq += 3; u4 qr: o_qr, o_rq += 1;
    # u5 rrq: o_rr += 2 * 1/2, o_rq += 2 * 1/2, o_qr += 2 * 1/2; u7 rr: o_rr += 2; u6 adds nothing.
    o = {("p", "p"): 3, ("p", "q"): 1, ("q", "p"): 1, ("q", "q"): 3, ("q", "r"): 2, ("r", "q"): 2, ("r", "r"): 3}
    n_c = {c: sum(v for (first, _), v in o.items() if first == c) for c in "pqr"}
    assert n_c == {"p": 4, "q": 6, "r": 5}
    n = sum(n_c.values())  # 15 pairable codes
    d_o = sum(v for (c, k), v in o.items() if c != k) / n  # 6 / 15
    d_e = sum(n_c[c] * n_c[k] for c in "pqr" for k in "pqr" if c != k) / (n * (n - 1))  # 148 / 210
    expected = 1 - d_o / d_e  # 16 / 37
    assert expected == pytest.approx(16 / 37, abs=1e-12)
    result = agreement(_missing_codes())
    assert result.krippendorff_alpha == pytest.approx(expected, abs=1e-9)
    assert (result.units, result.complete) == (7, 3)
    without_single = {unit: by_coder for unit, by_coder in _missing_codes().items() if unit != "u6"}
    assert agreement(without_single).krippendorff_alpha == pytest.approx(expected, abs=1e-9)


def test_constant_identical_coders_have_no_kappa():
    result = agreement({"u1": {"a": "x", "b": "x"}, "u2": {"a": "x", "b": "x"}})
    assert result.pairs == (PairKappa("a", "b", 2, None),)
    assert result.fleiss_kappa is None
    assert result.krippendorff_alpha is None  # one category: the library refuses
    assert result.pct_all_agree == 100.0


def test_single_coder_has_no_agreement():
    result = agreement({"u1": {"a": "x"}, "u2": {"a": "y"}, "u3": {}})
    assert result == Agreement(("a",), 2, 2, None, None, None, ())


def test_no_complete_unit():
    codes = {
        "u1": {"a": "x", "b": "x"},
        "u2": {"b": "y", "c": "y"},
        "u3": {"a": "x", "c": "y"},
        "u4": {"d": "x"},
    }
    result = agreement(codes)
    assert result.coders == ("a", "b", "c", "d")
    assert (result.units, result.complete, result.fleiss_kappa, result.pct_all_agree) == (4, 0, None, None)
    # a-c on u3 only: po = 0, pe = 1 * 0 + 0 * 1 = 0 -> kappa 0; a-b only agree on x -> undefined.
    assert result.pairs == (
        PairKappa("a", "b", 1, None),
        PairKappa("a", "c", 1, 0.0),
        PairKappa("a", "d", 0, None),
        PairKappa("b", "c", 1, None),
        PairKappa("b", "d", 0, None),
        PairKappa("c", "d", 0, None),
    )
    # o_xx = 2, o_yy = 2, o_xy = o_yx = 1; n_x = n_y = 3: alpha = 1 - (n - 1) * 2 / (36 - 9 - 9).
    assert result.krippendorff_alpha == pytest.approx(1 - 5 * 2 / 18, abs=1e-9)


def _multi_choice() -> dict[str, dict[str, str]]:
    def f(chosen: set[str] | None = None) -> str:
        return "|".join(sorted(chosen or ()))

    return {
        "u1": {"r1": f({"A"}), "r2": f({"A"})},
        "u2": {"r1": f({"A", "B"}), "r2": f({"B"})},
        "u3": {"r1": f(), "r2": f()},
        "u4": {"r1": f({"B"}), "r2": f({"A", "B"})},
        "u5": {"r1": f({"C"}), "r2": f()},
        "u6": {"r1": f({"A", "C"}), "r2": f({"A"})},
    }


def test_per_code_binary_presence():
    results = dict(per_code(_multi_choice(), ["A", "B", "C", "D"]))
    assert list(results) == ["A", "B", "C", "D"]
    # A: r1 = 1,1,0,0,0,1; r2 = 1,0,0,1,0,1 -> both 2, neither 2, one each way 1 + 1.
    po, pe = 4 / 6, (3 / 6) * (3 / 6) + (3 / 6) * (3 / 6)
    assert results["A"].pairs[0].kappa == pytest.approx((po - pe) / (1 - pe), abs=1e-12)  # 1/3
    assert results["A"].pairs[0].n == 6 and results["A"].units == 6  # u3 (no code chosen) counts
    # B: r1 and r2 identical, 2 present of 6 -> po = 1, pe = (2/6)^2 + (4/6)^2 = 5/9 -> kappa 1.
    assert results["B"].pairs[0].kappa == pytest.approx(1.0, abs=1e-12)
    # C: r1 = 0,0,0,0,1,1; r2 never -> po = 4/6, pe = (4/6) * 1 + (2/6) * 0 -> kappa 0.
    assert results["C"].pairs[0].kappa == pytest.approx(0.0, abs=1e-12)
    # D: nobody chose it -> one category throughout: undefined.
    assert results["D"].pairs[0].kappa is None and results["D"].krippendorff_alpha is None


def test_confusion_counts():
    codes = {
        "u1": {"a": "x", "b": "x"},
        "u2": {"a": "x", "b": "y"},
        "u3": {"a": "y", "b": "y"},
        "u4": {"a": "z", "b": "x"},
        "u5": {"a": "x", "b": "y"},
        "u6": {"a": "y"},  # not coded by b: left out
        "u7": {"b": "z"},  # not coded by a: left out
    }
    # rows = a: x -> b x once (u1), y twice (u2, u5); y -> y (u3); z -> x (u4).
    assert confusion(codes, "a", "b") == (["x", "y", "z"], [[1, 2, 0], [0, 1, 0], [1, 0, 0]])
    assert confusion(codes, "b", "a") == (["x", "y", "z"], [[1, 0, 1], [2, 1, 0], [0, 0, 0]])
    assert confusion(_two_coders_ten_units(), "a", "b") == (["no", "yes"], [[3, 2], [1, 4]])
    assert confusion(codes, "a", "nobody") == ([], [])


def test_all_agree():
    assert all_agree({"a": "x", "b": "x", "c": "x"})
    assert not all_agree({"a": "x", "b": "y"})
    assert not all_agree({"a": "x"})
    assert not all_agree({})


def test_as_dict_is_json_ready():
    data = agreement(_missing_codes()).as_dict()
    assert json.loads(json.dumps(data)) == data
    assert list(data) == ["units", "coders", "complete", "fleiss_kappa", "krippendorff_alpha", "pct_all_agree", "pairs"]
    assert data["coders"] == ["A", "B", "C"]
    assert data["pairs"][0] == {"a": "A", "b": "B", "n": 4, "kappa": data["pairs"][0]["kappa"]}
    assert all(isinstance(value, float) for value in (data["fleiss_kappa"], data["krippendorff_alpha"]))
