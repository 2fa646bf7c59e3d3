"""The embedded PostgreSQL refuses, with a clear error, a CPU its pgvector cannot run on."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from appliance.errors import EmbeddedServerError
from appliance.store import embedded
from appliance.store.embedded import EmbeddedPostgres, missing_cpu_features

# An AMD EPYC with AVX2 and no AVX-512, and an Intel Celeron J4125 (no AVX at all).
EPYC = (
    "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
    "flags\t\t: fpu sse2 ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt xsave avx f16c abm "
    "bmi1 avx2 bmi2 sha_ni\n"
)
CELERON = (
    "processor\t: 0\nvendor_id\t: GenuineIntel\n"
    "flags\t\t: fpu sse2 ssse3 cx16 sse4_1 sse4_2 movbe popcnt xsave sha_ni\n"
)


def test_an_avx2_cpu_without_avx512_has_all_it_needs() -> None:
    assert missing_cpu_features(EPYC) == []


def test_a_cpu_without_avx_lacks_the_vector_instructions() -> None:
    assert missing_cpu_features(CELERON) == ["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm"]


def test_a_text_without_flags_claims_nothing_missing() -> None:
    assert missing_cpu_features("processor\t: 0\n") == []


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the check is for x86-64 CPUs")
def test_the_server_does_not_start_on_a_cpu_it_would_crash_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(CELERON)
    monkeypatch.setattr(embedded, "_CPUINFO", cpuinfo)
    server = EmbeddedPostgres(tmp_path / "data")
    with pytest.raises(EmbeddedServerError, match=r"x86-64-v3.*lacks avx, avx2.*db\.url"):
        server.start()
    assert not (tmp_path / "data" / "postgres").exists()
