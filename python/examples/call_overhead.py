"""What a call from Python costs beyond the Rust work it does.

`Pack.ask` reports, in `timings.total_us`, the time the Rust pipeline spent on the
request; the wall time of the Python call minus that is the binding's overhead
(converting the evidence dicts and the result through JSON, crossing into Rust,
releasing and taking back the GIL). Measured for a request with 3 evidence records
and one with 100 fact records.

    python python/examples/call_overhead.py [CALLS]
"""

import statistics
import sys
import time

import prooflog


def measure(pack, goal, evidence, calls):
    walls, rust = [], []
    for _ in range(calls):
        t = time.perf_counter()
        result = pack.ask(goal, evidence=evidence)
        walls.append((time.perf_counter() - t) * 1e6)
        rust.append(result["timings"]["total_us"])
    overhead = [w - r for w, r in zip(walls, rust)]
    return statistics.median(walls), statistics.median(rust), statistics.median(overhead)


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    pack = prooflog.Pack.default(base=[
        {"table": "DRONES", "member_ids": [42, 9]},
        {"table": "DRONES", "member_ids": [42, 7]},
    ])
    small = [
        {"table": "SIGHTINGS", "member_ids": [9], "attributes": {"zone": "airport"}},
        {"table": "SIGHTINGS", "member_ids": [7], "attributes": {"zone": "harbor"}},
        {"table": "CLEARANCES", "member_ids": [7]},
    ]
    hundred = [
        {"predicate": "sighting", "args": [1000 + i, "zone-%d" % (i % 10)], "confidence": 0.9}
        for i in range(100)
    ] + small
    print("| request | Python call (median) | Rust pipeline (median) | overhead (median) |")
    print("| --- | ---: | ---: | ---: |")
    for name, evidence in [("3 evidence records", small), ("103 evidence records", hundred)]:
        measure(pack, "threatens(42, zone)", evidence, 50)  # warm up
        wall, rust, over = measure(pack, "threatens(42, zone)", evidence, calls)
        print(f"| {name} | {wall:.0f} µs | {rust:.0f} µs | {over:.0f} µs |")


if __name__ == "__main__":
    main()
