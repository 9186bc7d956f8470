#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An independent check of ropegrad's digest rule: standard library only
(json + hashlib), its own RFC 8785 (JCS) serializer, nothing shared with the
C code.

    digest(object) = "sha256:" + hex SHA-256 of JCS(object without "metadata")

Usage:
  digest_check.py ROPEGRAD            a fresh `bench --record --manifest` manifest:
                                      every digest the run names, the comparison
                                      key, and the run digest `verify` prints
  digest_check.py --public FILE       the public KernelIndex record: the values
                                      its README publishes
Exit 0 when everything matches, 1 otherwise; 77 (skip) only when run without
the arguments it needs.
"""
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
from decimal import Decimal


def jcs_number(x):
    if isinstance(x, bool):
        raise ValueError("bool is not a number")
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise ValueError("NaN/Infinity have no JSON form")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    d = Decimal(repr(abs(x))).normalize()          # shortest round-trip digits
    _, digits, exp = d.as_tuple()
    s = "".join(str(c) for c in digits)
    k, n = len(s), exp + len(s)                     # ECMAScript Number::toString
    if k <= n <= 21:
        out = s + "0" * (n - k)
    elif 0 < n <= 21:
        out = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + s
    else:
        e = n - 1
        es = ("+" if e > 0 else "-") + str(abs(e))
        out = (s if k == 1 else s[0] + "." + s[1:]) + "e" + es
    return sign + out


def jcs_string(s):
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif c < 0x20:
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def jcs(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return jcs_string(v)
    if isinstance(v, (int, float)):
        return jcs_number(v)
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: k.encode("utf-16-be"))   # by UTF-16 code units
        return "{" + ",".join(jcs_string(k) + ":" + jcs(v[k]) for k in keys) + "}"
    raise ValueError("not a JSON value: %r" % (v,))


def digest(obj):
    body = {k: v for k, v in obj.items() if k != "metadata"}
    return "sha256:" + hashlib.sha256(jcs(body).encode("utf-8")).hexdigest()


def no_dups(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("repeated member name")
    return dict(pairs)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f, object_pairs_hook=no_dups)


REFS = {"protocol": "protocolDigest", "environment": "environmentDigest",
        "workload": "workloadDigest", "implementation": "implementationDigest"}

failures = []


def check(what, got, want):
    ok = got == want
    print("%-4s %-26s %s" % ("ok" if ok else "FAIL", what, got if ok else "%s != %s" % (got, want)))
    if not ok:
        failures.append(what)


def check_manifest(m):
    run = m["run"]["spec"]
    for role, ref in REFS.items():
        if role in m:
            check(role + " digest", digest(m[role]), run[ref])
    if "comparisonKey" in run:
        key = {"definition": run["sourceNative"]["benchmark"], "workloadDigest": run["workloadDigest"],
               "family": m["protocol"]["spec"]["comparability"]["family"],
               "timer": m["protocol"]["spec"]["measurement"]["timer"],
               "statistic": m["protocol"]["spec"]["measurement"]["primaryStatistic"],
               "product": m["environment"]["spec"]["hardware"]["product"]}
        check("comparison key", "sha256:" + hashlib.sha256(jcs(key).encode()).hexdigest(), run["comparisonKey"])
    return digest(m["run"])


def main():
    # RFC 8785's own number examples (its appendix), so the serializer is checked too.
    for x, want in [(0.0, "0"), (-0.0, "0"), (1e21, "1e+21"), (1e-7, "1e-7"), (333333333.3333333, "333333333.3333333"),
                    (4.5, "4.5"), (2e-3, "0.002"), (0.000001, "0.000001"), (9007199254740992, "9007199254740992"),
                    (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308")]:
        check("number %r" % x, jcs_number(x), want)
    if len(sys.argv) == 3 and sys.argv[1] == "--public":
        m = load(sys.argv[2])
        run_digest = check_manifest(m)
        check("public protocol digest", digest(m["protocol"]),
              "sha256:2964c5c4ed9cb0dcdc0f74674035bc71bf5e66620939e38441060f76434ed3e5")
        check("public environment digest", digest(m["environment"]),
              "sha256:5296c820e166474e590abb1beaf7728cdfe0a4bde9bf55f8966a40f4f5401621")
        check("public run digest", run_digest,
              "sha256:d846a8c39272f37588b6a339369ae9492b3be6c6770456ff354295c00ce2ce5d")
    elif len(sys.argv) == 2:
        exe = sys.argv[1]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.json")
            subprocess.run([exe, "bench", "--backend", "cpu", "--workloads", "2,4", "--iterations", "3",
                            "--warmup", "1", "--record", "--db", os.path.join(d, "r.db"), "--manifest", path],
                           check=True, stdout=subprocess.DEVNULL)
            m = load(path)
            check("envelope", sorted(m), sorted(["run", "protocol", "environment", "workload", "implementation"]))
            run_digest = check_manifest(m)
            for role in REFS:
                check(role + " present", role in m, True)
            out = subprocess.run([exe, "verify", path], check=True, capture_output=True, text=True).stdout
            check("run digest (verify)", run_digest in out, True)
            out = subprocess.run([exe, "runs", "show", "1", "--db", os.path.join(d, "r.db")], check=True,
                                 capture_output=True, text=True).stdout
            check("run digest (registry)", run_digest in out, True)
    else:
        print(__doc__)
        return 77
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
