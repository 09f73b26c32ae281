"""``CompanyLocks``: one lock per CNPJ, the same one for every caller of one product's capture."""

from __future__ import annotations

import threading

from app.capture.engine.locks import CompanyLocks
from tests.support.nfe_harness import RECIPIENT, SUPPLIER


def test_one_cnpj_has_one_lock_and_another_cnpj_its_own() -> None:
    locks = CompanyLocks()
    mine = locks.for_cnpj(RECIPIENT)
    assert locks.for_cnpj(RECIPIENT) is mine
    assert locks.for_cnpj(SUPPLIER) is not mine
    assert mine.acquire(blocking=False)
    try:
        assert not locks.for_cnpj(RECIPIENT).acquire(blocking=False)  # a second run of the CNPJ waits
        other = locks.for_cnpj(SUPPLIER)
        assert other.acquire(blocking=False)  # another company is not held up
        other.release()
    finally:
        mine.release()


def test_threads_asking_at_once_all_get_the_same_lock() -> None:
    locks = CompanyLocks()
    start = threading.Barrier(8)
    seen: list[threading.Lock] = []
    guard = threading.Lock()

    def ask() -> None:
        start.wait(timeout=10)
        lock = locks.for_cnpj(RECIPIENT)
        with guard:
            seen.append(lock)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert len(seen) == 8 and len({id(lock) for lock in seen}) == 1


def test_each_products_capture_has_its_own_locks() -> None:
    # NF-e and CT-e are different services: a CT-e run never waits for the NF-e run of the CNPJ.
    nfe, cte = CompanyLocks(), CompanyLocks()
    held = nfe.for_cnpj(RECIPIENT)
    assert held.acquire(blocking=False)
    try:
        assert cte.for_cnpj(RECIPIENT).acquire(blocking=False)
        cte.for_cnpj(RECIPIENT).release()
    finally:
        held.release()
