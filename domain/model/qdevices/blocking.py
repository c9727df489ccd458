"""Why an order of a record blocks a new run, in one line, for ``qdevices jobs``."""

from __future__ import annotations

from dunscaith.domain.model.qdevices.orders import OrderState, OrderView, RunView
from dunscaith.domain.model.qdevices.sites import SiteName

VLQ_CONFIGURING = "Configuring"


def stuck_configuring(site: str, order: OrderView) -> bool:
    """A VLQ job whose SubmitJob was answered 200 and that the site still shows Configuring: no resolve
    option takes it (the job may still be given to the scheduler), so only IT4I can settle it."""
    words = [mark.state for mark in order.statuses if mark.state is not None]
    return (site == SiteName.VLQ.value and order.state is OrderState.OPEN and order.submitted
            and bool(words) and words[-1] == VLQ_CONFIGURING)


def blocks(view: RunView, order: OrderView) -> str | None:
    """What this order blocks and why, or None when it blocks nothing."""
    if order.state in (OrderState.LOST, OrderState.SENDING):
        return "blocks every new run, on every site, until it is resolved: its job may exist (qdevices resolve)"
    if order.state is not OrderState.OPEN:
        return None
    if stuck_configuring(view.site, order):
        return (f"blocks every new run on {view.site}: SubmitJob was answered, yet VLQ still shows the job "
                "Configuring; no resolve option takes it: ask IT4I support whether it will run "
                "(docs/qdevices/vlq.md), and resume once it has left Configuring")
    return f"blocks every new run on {view.site} until a resume collects it"
