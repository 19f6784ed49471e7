"""`ib web`: the page over the bus. It lives in the `web` package (the `ittybus[web]` extra), imported only
when this command runs."""

from __future__ import annotations

import typer


def web(
    port: int = typer.Option(
        0, "--port", help="the port to listen on (default: IB_WEB_PORT, else a free one)"
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="the address to listen on (default: loopback only)"),
    tls_cert: str = typer.Option("", "--tls-cert", help="serve over HTTPS with this certificate (PEM)"),
    tls_key: str = typer.Option("", "--tls-key", help="... and this private key (PEM)"),
    expose: bool = typer.Option(
        False,
        "--expose-agents-without-tls",
        help="serve a non-loopback --host over plain HTTP: agents, dialogs and their buttons go unencrypted",
    ),
    hide_token: bool = typer.Option(
        False, "--hide-token", help="print the address without its token (it is in .ib/web-token): for logs"
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="log every click and stream"),
    invite: str | None = typer.Option(
        None,
        "--invite",
        metavar="NAME",
        help="let NAME in from another machine: prints an address for NAME alone (with --host, --port, TLS)",
    ),
    revoke: str | None = typer.Option(
        None, "--revoke", metavar="NAME", help="let NAME in no more: the next request from NAME gets 401"
    ),
    people: bool = typer.Option(
        False, "--people", help="list who is let in besides you (never their tokens)"
    ),
) -> None:
    """Serve a live page of the agents and what waits on you; prints its address with the token.

    Example: ib web     (then open the http://127.0.0.1:PORT/?t=... it prints)
    Example: ib web --invite alice --host 0.0.0.0 --port 8443 --tls-cert c.pem --tls-key k.pem
    """
    from web.invite import Change, manage  # light: the people's file, no server
    from web.options import Options

    options = Options(host, port, tls_cert, tls_key, expose, verbose, hide_token)
    change = Change(invite, revoke, people)
    if change.asked:
        raise typer.Exit(manage(change, options))
    try:
        from web.app import run
    except ImportError as e:
        typer.echo(f"ib web: error: {e.name} is missing: pip install 'ittybus[web]'", err=True)
        raise typer.Exit(1) from e
    raise typer.Exit(run(options))
