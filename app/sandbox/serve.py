"""``python main.py sandbox serve``: run the sandbox over HTTPS for the demo or manual tests.

Writes the test PKI (CA + one .pfx per company) to ``--pki-dir`` and, with ``--write-settings``,
a settings.json in that data folder pointing the app's homologation endpoints at the sandbox.
The lead wires :func:`add_arguments` / :func:`run` into the CLI's argparse.
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from app.config.endpoints import Service
from app.config.settings import Settings, load_settings, save_settings
from app.core.clock import Clock, ScaledClock, SystemClock
from app.core.products import Environment

if TYPE_CHECKING:  # the simulator loads when it serves, never for `--help`
    from app.sandbox.sandbox import Sandbox
    from app.sandbox.scenario import ScenarioRun

log = logging.getLogger(__name__)

SETTINGS_SERVICE = {
    Service.NFE_DISTRIBUICAO: "nfe_dist",
    Service.CTE_DISTRIBUICAO: "cte_dist",
    Service.NFE_RECEPCAO_EVENTO: "nfe_evento",
    Service.NFSE_ADN_CONTRIBUINTES: "adn",
    Service.NFSE_SEFIN: "sefin",
}


BACKLOG_HOURS = 24.0  # the scenario's last day already issued: the first `capture --once` gets documents
PASSWORD_FILE = "senha-de-teste.txt"  # noqa: S105 - a file name: the test certificates' password goes in it


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="endereço de escuta (padrão 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8443, help="porta HTTPS (0 = qualquer livre)")
    parser.add_argument("--scenario", type=Path, help="arquivo JSON de cenário (empresas, emissões, falhas)")
    parser.add_argument("--pki-dir", type=Path, help="pasta onde gravar a AC de teste e os .pfx das empresas")
    parser.add_argument(
        "--write-settings",
        type=Path,
        metavar="DATA_DIR",
        help="pasta de dados do app onde gravar settings.json apontando para o sandbox",
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=1.0,
        help="aceleração do relógio do simulador (ex.: 60); o aplicativo segue no relógio real",
    )
    parser.add_argument(
        "--backlog",
        type=float,
        default=BACKLOG_HOURS,
        metavar="HORAS",
        help=f"os documentos emitidos nas últimas HORAS já esperam pela 1ª consulta (padrão {BACKLOG_HOURS:g})",
    )
    parser.add_argument("--seed", type=int, default=None, help="semente dos documentos gerados")


def write_pki(sandbox: Sandbox, run: ScenarioRun, folder: Path) -> None:
    """CA certificate, the CA itself (to reload) and one password-protected .pfx per company."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ca.pem").write_bytes(sandbox.ca_cert_pem)
    sandbox.pki.save(folder / "ca")
    companies = []
    for cnpj, cert in run.certificates.items():
        (folder / f"{cnpj}.pfx").write_bytes(cert.pfx)
        companies.append(
            {"cnpj": cnpj, "name": sandbox.party(cnpj).name, "pfx": f"{cnpj}.pfx", "password": cert.password}
        )
    # test certificates only: their passwords are the documented test password
    (folder / "companies.json").write_text(json.dumps(companies, ensure_ascii=False, indent=2), encoding="utf-8")
    passwords = {cert.password for cert in run.certificates.values()}
    if len(passwords) == 1:  # what `company add --password-stdin <` reads
        (folder / PASSWORD_FILE).write_text(passwords.pop() + "\n", encoding="utf-8")


def write_settings(sandbox: Sandbox, data_dir: Path, ca_file: Path) -> Path:
    """Point the homologation endpoints at the sandbox (keeps any other setting already there)."""
    settings: Settings = load_settings(data_dir)
    urls = sandbox.urls
    for service, name in SETTINGS_SERVICE.items():
        settings = settings.with_endpoint(service, Environment.HOMOLOGACAO, url=urls[name], ca_bundle=ca_file)
    return save_settings(data_dir, settings)


def serve(
    args: argparse.Namespace,
    *,
    stop: threading.Event | None = None,
    ready: Callable[[Sandbox, ScenarioRun], None] | None = None,
    clock: Clock | None = None,
) -> int:
    """Run until ``stop`` is set (or Ctrl+C). ``ready`` is called once the server listens."""
    from app.sandbox.pki import TestPki
    from app.sandbox.router import PATHS
    from app.sandbox.sandbox import Sandbox
    from app.sandbox.scenario import Scenario

    stop = stop or threading.Event()
    clock = clock or (ScaledClock(args.speed) if args.speed != 1 else SystemClock())
    scenario = Scenario.load(args.scenario) if args.scenario else Scenario()
    seed = args.seed if args.seed is not None else scenario.seed
    pki_dir = args.pki_dir or (Path(args.write_settings) / "sandbox-pki" if args.write_settings else None)
    # reuse a saved test CA so the app's trust in ca.pem survives a restart of the sandbox
    pki = TestPki.load(Path(pki_dir) / "ca") if pki_dir is not None and (Path(pki_dir) / "ca").is_dir() else None
    with Sandbox(clock, pki=pki, seed=seed) as sandbox:
        backlog = timedelta(hours=max(0.0, getattr(args, "backlog", BACKLOG_HOURS)))
        run = scenario.attach(sandbox, start=clock.now() - backlog)
        waiting = run.run_until(clock.now())
        base = sandbox.start_https(args.host, args.port)
        if pki_dir is not None:
            write_pki(sandbox, run, Path(pki_dir))
        settings_file = None
        if args.write_settings:
            ca = Path(pki_dir or ".").resolve() / "ca.pem"
            settings_file = write_settings(sandbox, Path(args.write_settings), ca)
        print(f"Sandbox em {base}")
        for name, path in PATHS.items():
            print(f"  {name}: {base}{path}")
        if backlog:
            hours = backlog.total_seconds() / 3600
            print(f"{waiting} documento(s) emitidos nas últimas {hours:g} h já esperam pelas empresas.")
        _print_guide(run, Path(pki_dir) if pki_dir is not None else None, settings_file, args)
        if ready is not None:
            ready(sandbox, run)
        try:
            while not stop.is_set():
                run.run_until(clock.now())
                stop.wait(0.5)
        except KeyboardInterrupt:
            pass
    return 0


def _print_guide(run: ScenarioRun, pki_dir: Path | None, settings_file: Path | None, args: argparse.Namespace) -> None:
    """Where everything was written and the next commands, ready to paste."""
    if pki_dir is not None:
        print(f"AC de teste e um .pfx por empresa em {pki_dir}")
        print(f"  {pki_dir / 'companies.json'}: CNPJ, razão social, arquivo e senha de teste de cada empresa")
        if (pki_dir / PASSWORD_FILE).is_file():
            print(f"  {pki_dir / PASSWORD_FILE}: a senha de teste dos certificados")
    for cnpj in run.companies:
        print(f"  {cnpj}  {run.sandbox.party(cnpj).name}")
    if settings_file is None or pki_dir is None:
        return
    print(f"settings.json (homologação aponta para este simulador): {settings_file}")
    data = args.write_settings
    print("Em outro terminal:")
    print(
        f"  python main.py --data-dir {data} company add --pfx {pki_dir / (run.companies[0] + '.pfx')} "
        f"--environment homologacao --products nfe --password-stdin < {pki_dir / PASSWORD_FILE}"
    )
    print(f"  python main.py --data-dir {data} capture --once")
    print("Ctrl+C para parar.", flush=True)


def run(args: argparse.Namespace) -> int:
    return serve(args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sandbox serve")
    add_arguments(parser)
    return run(parser.parse_args(argv))
