"""tcrtl.workload.run against `tcrtl workload run`: the same topology and options give, field
by field, the values the command line writes in layers.csv (all but the wall-clock
sim_seconds, a timing field)."""

import csv
import math

import pytest

import tcrtl
from conftest import cli

# Two GEMM layers and a convolution topology: ragged shapes (not multiples of the array), one
# layer large enough to be checked on a sample with max_check=4000.
GEMM_ROWS = [("fc1", 9, 7, 13), ("proj", 5, 11, 6), ("big", 20, 12, 24)]
CONV_ROWS = [("conv1", 6, 6, 3, 3, 2, 4, 1), ("conv2", 7, 5, 2, 2, 3, 5, 2)]


def _csv_file(path, rows, header):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def _cli_layers(topology, out, *args):
    cli("workload", "run", topology, "--out", out, *args)
    with open(out / "layers.csv", newline="") as f:
        return list(csv.DictReader(f))


def _same_value(column, ours, text):
    """Our value equals the CSV field `text`: counts exactly, reals to the last bit (the file
    writes the shortest text that reads back to the same float), the name as the text, an
    empty field as None."""
    if text == "":
        return ours is None
    if column == "layer":
        return ours == text
    if isinstance(ours, bool) or ours is None:
        return False
    if isinstance(ours, int):
        return str(ours) == text
    return isinstance(ours, float) and float(text) == ours and not math.isnan(ours)


def _assert_same(res, cli_rows, header):
    assert res.columns == header
    assert len(res.layers) == len(cli_rows) > 0
    for ours, theirs in zip(res.layers, cli_rows):
        assert list(ours) == header
        for column in header:
            if column == "sim_seconds":  # wall-clock seconds of the simulation
                assert ours[column] >= 0.0
                continue
            assert _same_value(column, ours[column], theirs[column]), (
                f"{ours['layer']}.{column}: {ours[column]!r} vs {theirs[column]!r}")


@pytest.mark.parametrize(
    "options, cli_args",
    [
        (dict(), []),
        (dict(rows=4, cols=8, dataflow="ws", seed=7, max_check=4000, samples=16),
         ["--rows", "4", "--cols", "8", "--dataflow", "ws", "--seed", "7", "--max-check",
          "4000", "--samples", "16"]),
        (dict(rows=3, cols=5, dataflow="is", seed=9),
         ["--rows", "3", "--cols", "5", "--dataflow", "is", "--seed", "9"]),
        (dict(fmt="s8", threads=2, timing="scalesim"),
         ["--format", "s8", "--threads", "2", "--timing", "scalesim"]),
        (dict(fmt="e4m3", acc="nvidia", gpu="h100", analytic=True, clock_ghz=1.5),
         ["--format", "e4m3", "--acc", "nvidia", "--gpu", "h100", "--analytic",
          "--clock-ghz", "1.5"]),
        (dict(memory="tma", stages=2), ["--memory", "tma", "--stages", "2"]),
        (dict(energy=True, tech="7nm"), ["--energy", "--tech", "7nm"]),
    ],
)
def test_gemm_topology_gives_the_cli_layers_csv(tmp_path, options, cli_args):
    topo = _csv_file(tmp_path / "gemm.csv", GEMM_ROWS, ["Layer", "M", "N", "K"])
    cli_rows = _cli_layers(topo, tmp_path / "out", *cli_args)
    with open(tmp_path / "out" / "layers.csv", newline="") as f:
        header = next(csv.reader(f))
    # The topology as a path, and as rows: the same values.
    for res in (tcrtl.workload.run(topo, **options), tcrtl.workload.run(GEMM_ROWS, **options)):
        _assert_same(res, cli_rows, header)
    res = tcrtl.workload.run(topo, **options)
    assert res.summary["topology"] == str(topo)
    assert res.summary["complete"] is True
    assert res.cycles == sum(l["cycles"] for l in res.layers)
    if not options.get("analytic"):
        assert res.mismatches == 0
        assert all(l["checked"] > 0 for l in res.layers)


def test_conv_topology_and_a_shard(tmp_path):
    header8 = ["Layer name", "IFMAP Height", "IFMAP Width", "Filter Height", "Filter Width",
               "Channels", "Num Filter", "Strides"]
    topo = _csv_file(tmp_path / "conv.csv", CONV_ROWS, header8)
    cli_rows = _cli_layers(topo, tmp_path / "out", "--shard", "1/2")
    with open(tmp_path / "out" / "layers.csv", newline="") as f:
        header = next(csv.reader(f))
    res = tcrtl.workload.run(CONV_ROWS, shard=(1, 2))
    _assert_same(res, cli_rows, header)
    assert [l["layer"] for l in res.layers] == ["conv2"]
    # conv2 lowers to M = ofmap pixels, N = filters, K = filter window x channels, the ofmap
    # rounded up as SCALE-Sim does (docs/workloads.md): ceil((ifmap - filt + stride) / stride).
    oh, ow = math.ceil((7 - 2 + 2) / 2), math.ceil((5 - 2 + 2) / 2)
    assert (res.layers[0]["m"], res.layers[0]["n"], res.layers[0]["k"]) == (oh * ow, 5, 2 * 2 * 3)


def test_bad_options_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="one MAC a cycle"):
        tcrtl.workload.run(GEMM_ROWS, timing="scalesim", width=2)
    with pytest.raises(ValueError, match="not the formulas"):
        tcrtl.workload.run(GEMM_ROWS, energy=True, analytic=True)
    with pytest.raises(ValueError, match="unknown header"):
        tcrtl.workload.run(_bad_topology(tmp_path))
    with pytest.raises(ValueError, match="all of one kind"):
        tcrtl.workload.run([("a", 1, 2, 3), CONV_ROWS[0]])
    with pytest.raises(OSError):
        tcrtl.workload.run(tmp_path / "absent.csv")
    with pytest.raises(ValueError, match="shard"):
        tcrtl.workload.run(GEMM_ROWS, shard=(2, 2))


def _bad_topology(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("Name,Rows\nx,1\n")
    return p
