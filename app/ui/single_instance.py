"""One window per data folder: a second launch hands over to the first and exits.

The first instance listens on a local socket (a named pipe on Windows) whose name comes from
the data folder and the user; a second one connects, asks the first to show its window, and
ends. Only the window is single: the data-folder lock (``app.capture.instance``) still keeps a
second capturing process out whatever starts it (the command line, another user's session).
"""

from __future__ import annotations

import getpass
import hashlib
import os
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

RAISE = b"raise\n"
CONNECT_MS = 1_000


def server_name(data_dir: Path) -> str:
    """The socket's name for this folder and user (case-insensitive paths on Windows)."""
    path = str(data_dir.resolve())
    if os.name == "nt":
        path = path.casefold()
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no user name in the environment: the folder alone
        user = ""
    digest = hashlib.sha256(f"{user}\0{path}".encode()).hexdigest()[:24]
    return f"captura-dfe-{digest}"


class SingleInstance(QObject):
    """Call :meth:`claim` once: True makes this the instance (``activated`` fires when another
    launch asks for the window); False means another instance has the folder and was asked."""

    activated = Signal()

    def __init__(self, data_dir: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = server_name(data_dir)
        self._server: QLocalServer | None = None
        self._clients: list[QLocalSocket] = []  # held here until they hang up

    def claim(self) -> bool:
        if self._hand_over():
            return False
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            # A socket left by a process that crashed (Unix): nobody answered on it, so it is ours.
            QLocalServer.removeServer(self.name)
            if not server.listen(self.name):
                return True  # no hand-over possible, but this launch still works (the data lock guards)
        server.newConnection.connect(self._connected)
        self._server = server
        return True

    def _hand_over(self) -> bool:
        socket = QLocalSocket()  # used and gone within this call: no parent, no event loop
        socket.connectToServer(self.name)
        if not socket.waitForConnected(CONNECT_MS):
            return False
        socket.write(RAISE)
        socket.waitForBytesWritten(CONNECT_MS)
        socket.disconnectFromServer()
        if socket.state() is not QLocalSocket.LocalSocketState.UnconnectedState:
            socket.waitForDisconnected(CONNECT_MS)
        return True

    def _connected(self) -> None:
        assert self._server is not None
        while (socket := self._server.nextPendingConnection()) is not None:
            self._clients.append(socket)
            socket.readyRead.connect(partial(self._read, socket))
            socket.disconnected.connect(partial(self._gone, socket))
            if socket.bytesAvailable():
                self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        if bytes(socket.readAll().data()).startswith(RAISE.strip()):
            self.activated.emit()

    def _gone(self, socket: QLocalSocket) -> None:
        if socket in self._clients:
            self._clients.remove(socket)
            socket.deleteLater()

    def close(self) -> None:
        for socket in self._clients:
            socket.readyRead.disconnect()
            socket.disconnected.disconnect()
            socket.abort()
        self._clients.clear()
        if self._server is not None:
            self._server.close()
            self._server = None


SECOND_LAUNCH = "O Captura DF-e já está aberto para a pasta de dados {folder}: a janela dele foi trazida para a frente."
