"""The tray: the window closes to it and the capture carries on; its menu and the notifications.

The menu (Abrir, Pausar/Retomar todas, Sair, and the next query) is rebuilt on ``aboutToShow``
from the last look at the capture (``Desk.background_state``, taken every ``POLL_MS`` on a
worker, and again whenever the menu opens): the GUI thread never reads the database. The
notification policy (``app.desk.notifications``) decides what is told; the tray's balloon
tells it, or the window's status bar where there is no system tray (a test, a bare desktop).

Without a system tray (``QSystemTrayIcon.isSystemTrayAvailable()`` false, as offscreen) there
is no icon and closing the window closes the application, as before; the menu and the policy
still work, so tests drive them without a tray.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QPoint, QRectF, Qt, QTimer
from PySide6.QtGui import QAction, QColor, QFont, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon

from app import APP_NAME
from app.core.cadence import Action
from app.desk.notifications import Level, Notification, NotificationPolicy, next_query_text

if TYPE_CHECKING:
    from app.desk.background import BackgroundState
    from app.ui.main_window import MainWindow

POLL_MS = 60_000  # a look at the capture for the menu and the notifications (window hidden or not)
TELL_MS = 5_000  # how often the policy is asked whether something may be told now
MESSAGE_MS = 15_000
HIDDEN_TEXT = "A captura continua em segundo plano. Para encerrar, use Sair no menu deste ícone."
_ICONS = {
    Level.INFO: QSystemTrayIcon.MessageIcon.Information,
    Level.WARNING: QSystemTrayIcon.MessageIcon.Warning,
    Level.CRITICAL: QSystemTrayIcon.MessageIcon.Critical,
}


def tray_icon(paused: bool = False) -> QIcon:
    """A small painted mark (green; grey while every capture is paused)."""
    pixmap = QPixmap(64, 64)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor("#8a8a8a" if paused else "#1f7a4d"))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawRoundedRect(QRectF(2, 2, 60, 60), 12, 12)
    painter.setPen(QColor("white"))
    font = QFont()
    font.setBold(True)
    font.setPixelSize(28)
    painter.setFont(font)
    painter.drawText(QRectF(0, 0, 64, 64), Qt.AlignmentFlag.AlignCenter, "DF")
    painter.end()
    return QIcon(pixmap)


class Tray(QObject):
    """The window's tray companion; ``system_tray`` None asks Qt whether there is a tray."""

    def __init__(
        self,
        window: MainWindow,
        *,
        system_tray: bool | None = None,
        policy: NotificationPolicy | None = None,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.available = QSystemTrayIcon.isSystemTrayAvailable() if system_tray is None else system_tray
        self.policy = policy or NotificationPolicy(lambda: window.desk.now())
        self.state: BackgroundState | None = None
        self.quitting = False
        self.shown: list[Notification] = []  # what was told, newest last (the window's log, tests)
        self._looking = False
        self._look_again = False  # asked during a look: that look may have read before the change
        self._hidden_once = False
        self.menu = QMenu(window)
        self.menu.setObjectName("tray-menu")
        self.menu.aboutToShow.connect(self._about_to_show)
        self.icon: QSystemTrayIcon | None = None
        if self.available:
            self.icon = QSystemTrayIcon(tray_icon(), self)
            self.icon.setToolTip(APP_NAME)
            self.icon.setContextMenu(self.menu)
            self.icon.activated.connect(self._icon_activated)
            self.icon.show()
            QApplication.setQuitOnLastWindowClosed(False)  # the window hides: "Sair" quits
        window.keep_in_tray = self.keeps_running
        window.menus.quit_app = self.quit  # Arquivo > Sair ends the program as the tray's Sair does
        if self.icon is not None:
            window.menus.keep_in_tray = window.close  # closing hides to the tray: the capture goes on
        window.notice.connect(self._notice)
        window.ready.connect(self._ready)
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self.look)
        self._tell = QTimer(self)
        self._tell.setInterval(TELL_MS)
        self._tell.timeout.connect(self.tell)
        self.rebuild()
        if window.opened is not None:  # made after the window opened its desk
            self._ready()

    @property
    def notifications_enabled(self) -> bool:
        return self.policy.enabled

    @notifications_enabled.setter
    def notifications_enabled(self, on: bool) -> None:
        """The settings' switch (a plain value: the settings dialog sets it)."""
        self.policy.enabled = on

    def _live(self) -> bool:
        """The window's desk is open (a closed window may outlive its desk: then nothing to do)."""
        desk = self.window.opened_desk
        return self.window.opened is not None and desk is not None and desk.opened is not None and not self.quitting

    def keeps_running(self) -> bool:
        """Closing the window hides it to the tray (False: closing closes); said the first time."""
        keeps = self.icon is not None and not self.quitting
        if keeps and not self._hidden_once:
            self._hidden_once = True
            self._show(Notification(APP_NAME, HIDDEN_TEXT, Level.INFO))
        return keeps

    # ------------------------------------------------------------------ looking

    def _ready(self) -> None:
        if self.quitting:
            return
        self.look()
        self._poll.start()
        self._tell.start()

    def look(self) -> None:
        """Take a look at the capture on a worker (one at a time); the menu and policy get it.
        Asked while a look is under way (a pause just saved), another follows it: the one under
        way may have read the capture before the change, and the next poll is a minute away."""
        if not self._live():
            return
        if self._looking:
            self._look_again = True
            return
        self._looking = True
        desk = self.window.desk
        # Ferramentas > Configurações may have switched notifications: it holds within a look.
        self.notifications_enabled = desk.settings().notifications
        self.window.tasks.run(desk.background_state, self._looked, self._look_failed)

    def _looked(self, state: BackgroundState) -> None:
        self._looking = False
        if self._look_again:
            self._look_again = False
            self.look()
        self.state = state
        self.policy.observe(state)
        if self.icon is not None:
            self.icon.setIcon(tray_icon(paused=state.all_paused))
            self.icon.setToolTip(f"{APP_NAME}\n{next_query_text(state, state.now)}")
        if self.menu.isVisible():
            self.rebuild()  # the texts change under the user's eyes, never the whole menu's place
        self.tell()

    def _look_failed(self, error: BaseException) -> None:
        self._looking = self._look_again = False
        self.window.statusBar().showMessage(f"Erro: {getattr(error, 'message', None) or error}", MESSAGE_MS)

    def _notice(self, notice: object) -> None:
        if self._live():
            self.policy.on_notice(notice)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ the menu

    def _about_to_show(self) -> None:
        self.rebuild()
        self.look()  # a fresh look: its answer updates the texts while the menu is open

    def rebuild(self) -> None:
        """The menu from the last look."""
        menu, state = self.menu, self.state
        menu.clear()
        opened = self.window.opened is not None
        show = self._action("tray-open", f"Abrir o {APP_NAME}", self.open_window)
        bold = show.font()
        bold.setBold(True)
        show.setFont(bold)
        text = next_query_text(state, self.window.desk.now()) if opened else "Abrindo a pasta de dados…"
        self._action("tray-next", text).setEnabled(False)
        if state is not None and (summary := _summary(state)):
            self._action("tray-summary", summary).setEnabled(False)
        menu.addSeparator()
        writable = self.window.writable
        if state is None or not state.all_paused:
            self._action("tray-pause", "Pausar todas", self.pause_all).setEnabled(writable)
        if state is not None and state.paused:
            self._action("tray-resume", "Retomar todas", self.resume_all).setEnabled(writable)
        menu.addSeparator()
        self._action("tray-quit", "Sair", self.quit)

    def _action(self, name: str, text: str, slot: object = None) -> QAction:
        action = self.menu.addAction(text)
        action.setObjectName(name)
        if slot is not None:
            action.triggered.connect(slot)
        return action

    def action(self, name: str) -> QAction | None:
        return next((a for a in self.menu.actions() if a.objectName() == name), None)

    def texts(self) -> list[str]:
        return [a.text() for a in self.menu.actions() if not a.isSeparator()]

    def popup_at(self, point: QPoint) -> None:
        self.menu.popup(point)

    # ------------------------------------------------------------------ actions

    def open_window(self) -> None:
        window = self.window
        window.showNormal()
        window.raise_()
        window.activateWindow()

    def _icon_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.open_window()

    def pause_all(self) -> None:
        self._change(self.window.desk.pause_all, "pausada(s): nenhuma consulta até retomar.", "Nada a pausar.")

    def resume_all(self) -> None:
        self._change(self.window.desk.resume_all, "retomada(s).", "Nenhuma captura estava pausada.")

    def _change(self, work: object, done_text: str, nothing: str) -> None:
        def done(count: int) -> None:
            text = f"Captura de {count} empresa(s)/produto(s) {done_text}" if count else nothing
            self.window.statusBar().showMessage(text, MESSAGE_MS)
            self.look()

        self.window.tasks.run(work, done)  # type: ignore[arg-type]

    def quit(self) -> None:
        """Close for good: the window closes (the desk stops in ``run_gui``) and the app ends."""
        self.quitting = True
        self._poll.stop()
        self._tell.stop()
        self.window.close()  # without a tray, closing the last window quits by itself
        if self.icon is not None:
            self.icon.hide()
            QApplication.quit()

    # ------------------------------------------------------------------ telling

    def tell(self) -> None:
        if not self._live():
            return
        notification = self.policy.take()
        if notification is not None:
            self._show(notification)

    def _show(self, notification: Notification) -> None:
        self.shown.append(notification)
        if self.icon is not None and QSystemTrayIcon.supportsMessages():
            self.icon.showMessage(notification.title, notification.text, _ICONS[notification.level], MESSAGE_MS)
        else:
            text = " · ".join(notification.text.splitlines())
            self.window.statusBar().showMessage(f"{notification.title}: {text}", MESSAGE_MS)


def _summary(state: BackgroundState) -> str:
    """ "200 empresa(s) · 3 bloqueada(s) · 1 parada(s)" (what needs a look, in a line)."""
    blocked = {line.company_id for line in state.companies for b in line.badges if b.action is Action.BLOCKED}
    parts = [f"{len(state.companies)} empresa(s)"]
    if state.paused and not state.all_paused:
        parts.append(f"{state.paused} captura(s) pausada(s)")
    if blocked:
        parts.append(f"{len(blocked)} bloqueada(s)")
    if state.stopped:
        parts.append(f"{len({s.company_id for s in state.stopped})} parada(s)")
    return " · ".join(parts)
