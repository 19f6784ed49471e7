"""A real MCP client session (the SDK's, over stdio) to an `ib mcp` process, callable from sync tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, TextResourceContents

from tests.cli import IB, IbRunner


@dataclass
class McpClient:
    portal: BlockingPortal
    session: ClientSession

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        return self.portal.call(lambda: self.session.call_tool(tool, arguments))

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The structured result of a call that must succeed."""
        result = self.call(tool, **arguments)
        assert not result.is_error, text(result)
        data: dict[str, Any] | None = result.structured_content
        assert data is not None
        return data

    def error(self, tool: str, **arguments: Any) -> str:
        """The one line of a call that must fail as a tool error."""
        result = self.call(tool, **arguments)
        assert result.is_error, result
        return text(result)

    def read(self, uri: str) -> str:
        """The text of a resource that must be read."""
        result = self.portal.call(lambda: self.session.read_resource(uri))
        return "\n".join(c.text for c in result.contents if isinstance(c, TextResourceContents))

    def read_error(self, uri: str) -> str:
        """The message of a resource read that must fail."""
        try:
            self.read(uri)
        except MCPError as e:
            return e.message
        raise AssertionError(f"reading {uri} did not fail")

    def resource_uris(self) -> list[str]:
        """The resources and the resource templates the server lists."""
        listed = self.portal.call(self.session.list_resources).resources
        templates = self.portal.call(self.session.list_resource_templates).resource_templates
        return sorted([str(r.uri) for r in listed] + [t.uri_template for t in templates])

    def tool_names(self) -> list[str]:
        return sorted(t.name for t in self.portal.call(self.session.list_tools).tools)


def text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


@contextmanager
def mcp_client(ib: IbRunner, errlog: TextIO, cwd: Path | None = None) -> Iterator[McpClient]:
    """`ib mcp` started as a client starts it, with the test's environment; its stderr into `errlog`."""
    params = StdioServerParameters(command=IB, args=["mcp"], env=ib.environ(), cwd=str(cwd or ib.cwd))
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_session(params, errlog)) as session,
    ):
        yield McpClient(portal, session)


@contextmanager
def served(ib: IbRunner, folder: Path) -> Iterator[McpClient]:
    """`ib mcp` for one test, its stderr in `folder`/mcp.err, which must hold no traceback at the end."""
    with (folder / "mcp.err").open("w") as errlog, mcp_client(ib, errlog) as session:
        yield session
    assert "Traceback" not in (folder / "mcp.err").read_text()


@asynccontextmanager
async def _session(params: StdioServerParameters, errlog: TextIO) -> AsyncIterator[ClientSession]:
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextmanager
def http_client(url: str, token: str) -> Iterator[McpClient]:
    """A session with an `ib mcp --http` at `url`, each request carrying the bearer token."""
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_http_session(url, token)) as session,
    ):
        yield McpClient(portal, session)


@asynccontextmanager
async def _http_session(url: str, token: str) -> AsyncIterator[ClientSession]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
