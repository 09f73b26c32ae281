"""The desk's opening in two steps (issue 24): the store and the grid's reads first, without the
capture's modules, then the capture; a read that needs the capture waits for it."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from app.core.products import Product
from app.desk import Desk
from app.desk.views import CompanyLine, GridFilter
from tests.desk.conftest import Office

ROOT = Path(__file__).resolve().parents[2]
CAPTURE_MODULES = ("app.capture.context", "app.capture.service", "app.capture.node", "httpx", "apscheduler", "keyring")


def test_the_store_step_reads_the_grid_without_loading_the_capture(office: Office) -> None:
    probe = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from app.core.products import Product\n"
        "from app.desk.desk import Desk\n"
        "from app.desk.views import GridFilter\n"
        "desk = Desk(Path(sys.argv[1]))  # a desk that captures, once opened\n"
        "desk.open_store()\n"
        "rows = desk.cursor(GridFilter(Product.NFE)).next_page(50)\n"
        f"loaded = [m for m in {CAPTURE_MODULES!r} if m in sys.modules]\n"
        "print(json.dumps({'keys': [r.access_key for r in rows], 'loaded': loaded, 'opened': desk.opened is not None,"
        " 'capturing': desk.capturing}))\n"
        "desk.close()\n"
    )
    data_dir = office.harness.office.data_dir
    done = subprocess.run(
        [sys.executable, "-c", probe, str(data_dir)], cwd=ROOT, capture_output=True, text=True, check=True, timeout=300
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(seen["keys"]) == sorted([*office.received, office.event_only])
    assert seen["loaded"] == []  # the protocols, the scheduler, the keyring: when the capture starts
    assert seen["opened"] is False and seen["capturing"] is False


def test_a_read_that_needs_the_capture_waits_for_the_opening(office: Office) -> None:
    desk = Desk(office.harness.office.data_dir, clock=office.harness.clock, capture=False)
    try:
        desk.open_store()
        assert len(desk.cursor(GridFilter(Product.NFE)).next_page(50)) == 4  # the grid reads already
        answers: list[list[CompanyLine] | BaseException] = []

        def ask() -> None:
            try:
                answers.append(desk.companies())  # the capture's service: not started yet
            except BaseException as error:  # noqa: BLE001 - the test reports it below
                answers.append(error)

        worker = threading.Thread(target=ask)
        worker.start()
        opened = desk.open()
        worker.join(60)
        assert not worker.is_alive()
        [lines] = answers
        assert isinstance(lines, list), lines
        assert [line.cnpj for line in lines] == [c.cnpj.value for c in desk.registered()]
        assert opened.read_only is False and desk.opened is opened
    finally:
        desk.close()


def test_a_store_opened_alone_closes(office: Office) -> None:
    desk = Desk(office.harness.office.data_dir, clock=office.harness.clock, capture=False)
    desk.open_store()
    assert desk.registered()
    assert desk.close() is True
    try:
        desk.registered()
    except Exception as error:  # noqa: BLE001 - the desk says the folder is closed
        assert "não está aberta" in str(error)
    else:
        raise AssertionError("a closed desk still read its store")
