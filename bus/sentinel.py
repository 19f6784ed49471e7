"""Which server is the primary of a Redis Sentinel service, asked over the light client.

The sentinels are asked in turn; one that is down is skipped. None answering is an outage (the hooks
spool); a service none of them knows is a configuration error.
"""

from __future__ import annotations

from bus.errors import BusError, BusUnavailable, ConfigError
from bus.resp import Address, Connection


def primary(address: Address, timeout: float) -> Address:
    """The address of the primary the sentinels of `address` name now, with the URL's credentials and
    database. Raises BusUnavailable when no sentinel answers, ConfigError when none knows the service."""
    unknown_to: list[str] = []
    failures: list[str] = []
    for host, port in address.sentinels:
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            with Connection(Address(host=host, port=port, tls=address.tls), timeout) as conn:
                reply = conn.call("SENTINEL", "get-master-addr-by-name", address.service or "")
        except ConfigError:
            raise
        except BusError as e:
            failures.append(f"{where}: {e}")
            continue
        if isinstance(reply, list) and len(reply) == 2 and all(isinstance(r, bytes) for r in reply):
            found_host, found_port = (r.decode() if isinstance(r, bytes) else "" for r in reply)
            return Address(
                host=found_host,
                port=int(found_port),
                username=address.username,
                password=address.password,
                db=address.db,
                tls=address.tls,
            )
        unknown_to.append(where)
    if unknown_to:
        raise ConfigError(
            f"IB_REDIS_URL: the sentinels at {', '.join(unknown_to)} know no service {address.service!r}"
        )
    raise BusUnavailable(f"no sentinel of IB_REDIS_URL answers ({'; '.join(failures)})")
