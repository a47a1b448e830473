"""Environment modules: which system (Lmod, Environment Modules), what ``module avail`` offers,
and whether an OpenMPI module exists for ``module_loads``.

``module`` is a shell function, not a program, so it is reached through the module system's
own command (``$LMOD_CMD python -t avail``, ``$MODULES_CMD python -t avail``) or, when the
notebook's environment never initialised it, through a login bash. Both Lmod and Environment
Modules print the listing on stderr. Listings are cached per (site, command, MODULEPATH) for
the life of the process: Lmod walks every module tree and can be slow on parallel filesystems.
The wizard's kernel asks again and again and gains; each ``ari-jupyter`` command is a new
process and lists afresh (Lmod's own spider cache is what helps there).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..i18n import message
from ..hosts.host import Host
from ..base.commands import CommandResult
from .context import ProbeContext, evidence_of, first_line, off_loop, unanswered
from .parsers import mpi_modules, openmpi_modules, parse_module_avail
from ..base.verdict import ProbeResult

LOGIN_SHELL_AVAIL = ("bash", "-lc", "module -t avail 2>&1")

_CACHE: dict[tuple, "ModuleListing"] = {}


@dataclass
class ModuleListing:
    system: str | None
    """``lmod``, ``environment-modules``, ``login-shell`` (found via bash -l), or None."""
    result: CommandResult | None
    modules: list[str] = field(default_factory=list)
    cached: bool = False

    @property
    def available(self) -> bool:
        return self.system is not None and self.result is not None and not self.missing

    @property
    def missing(self) -> bool:
        """The login shell has no ``module`` command at all."""
        r = self.result
        return r is None or r.not_found or (
            self.system == "login-shell" and (r.returncode == 127 or "module: command not found" in r.output)
        )


def clear_cache() -> None:
    _CACHE.clear()


def _listing_command(host: Host) -> tuple[str, tuple[str, ...]] | None:
    for variable, system in (("LMOD_CMD", "lmod"), ("MODULES_CMD", "environment-modules")):
        command = host.env.get(variable, "").strip()
        if command and host.which(command):
            return system, (command, "python", "-t", "avail")
    if host.which("bash"):
        return "login-shell", LOGIN_SHELL_AVAIL
    return None


async def list_modules(host: Host, ctx: ProbeContext) -> ModuleListing:
    """The site's modules (shared by the modules and mpi probes; cached unless disabled)."""
    chosen = _listing_command(host)
    if chosen is None:
        return ModuleListing(None, None)
    system, argv = chosen
    key = (host.name, host.is_demo, argv, host.env.get("MODULEPATH", ""))
    if ctx.module_cache and key in _CACHE:
        cached = _CACHE[key]
        return ModuleListing(cached.system, cached.result, list(cached.modules), cached=True)
    listing = await _list(host, ctx, system, argv)
    if (listing.result.ok and not listing.modules and system != "login-shell"
            and host.which("bash")):
        # LMOD_CMD inherited without MODULEPATH (a kernel started by a service): the login
        # shell sets MODULEPATH up the way the user's terminal does.
        login = await _list(host, ctx, "login-shell", LOGIN_SHELL_AVAIL)
        if login.modules:
            listing = login
    if ctx.module_cache and listing.result.ok and listing.modules:
        _CACHE[key] = listing
    return listing


async def _list(host: Host, ctx: ProbeContext, system: str, argv: tuple[str, ...]) -> ModuleListing:
    result = await ctx.run_shared(host, argv)
    # Lmod/Environment Modules list on stderr; the login shell merges it into stdout.
    listing_text = result.stderr if system != "login-shell" else result.stdout
    if not listing_text.strip():
        listing_text = result.output
    return ModuleListing(system, result, await off_loop(parse_module_avail, listing_text,
                                                        size=len(listing_text)))


async def probe_modules(host: Host, ctx: ProbeContext) -> ProbeResult:
    listing = await list_modules(host, ctx)
    # Off the event loop: a site with 20,000 modules must not hold widget messages back.
    return await off_loop(_modules_verdict, host, listing, size=len(listing.modules))


SYSTEM_NAMES = {"lmod": "Lmod", "environment-modules": "Environment Modules"}
"""Module systems by their own (untranslated) names; the login shell is said in words."""


def _system_name(system: str) -> str | dict:
    """The module system as a reader names it: "Lmod", or "the login shell" in their language."""
    return SYSTEM_NAMES.get(system) or message("probe.modules.system.login-shell")


def _modules_verdict(host: Host, listing: ModuleListing) -> ProbeResult:
    result = listing.result
    if listing.system is None or listing.missing:
        return ProbeResult(
            "modules", "skip",
            "no module system (Lmod or Environment Modules) on this host",
            message_id="probe.modules.none", fix_id="probe.modules.none.fix",
            command=result.command if result else "",
            evidence=evidence_of(host, result) if result else "",
            fix="Nothing to load: module_loads stays empty; software must be on PATH on every node.",
            data={"system": None, "modules": [], "has_openmpi": False},
        )
    data = {
        "system": listing.system,
        "version": host.env.get("LMOD_VERSION") or None,
        "modulepath": host.env.get("MODULEPATH") or None,
        "modules": listing.modules,
        "openmpi_modules": openmpi_modules(listing.modules),
        "mpi_modules": mpi_modules(listing.modules),
        "cuda_modules": [m for m in listing.modules if m.lower().startswith("cuda")],
        "has_openmpi": bool(openmpi_modules(listing.modules)),
        "cached": listing.cached,
    }
    hiccup = unanswered("modules", host, result, message("probe.what.module_list"))
    if hiccup is not None:
        return ProbeResult(**{**hiccup.to_json(), "data": data})
    # Lmod's stdout is shell code for the caller's environment, not something to show.
    shown_result = result if listing.system == "login-shell" else result._replace(stdout="")
    evidence = evidence_of(host, shown_result if shown_result.output else result)
    if not listing.modules:
        if not result.ok:
            return ProbeResult.of(
                "modules", "unknown", "probe.modules.avail_failed",
                params={"code": result.returncode, "answer": first_line(result.output)},
                command=result.command, evidence=evidence, data=data,
            )
        return ProbeResult.of(
            "modules", "warn", "probe.modules.empty", fix_id="probe.modules.empty.fix",
            params={"system": _system_name(listing.system)},
            command=result.command, evidence=evidence, data=data,
        )
    shown = ", ".join(listing.modules[:8]) + (" ..." if len(listing.modules) > 8 else "")
    params = {"count": len(listing.modules), "system": _system_name(listing.system), "shown": shown,
              "mpi": message("probe.modules.mpi", modules=", ".join(data["mpi_modules"]))
              if data["mpi_modules"] else message("probe.modules.no_mpi")}
    return ProbeResult.of(
        "modules", "ok", "probe.modules.ok" if not listing.cached else "probe.modules.ok_cached",
        params=params, command=result.command, evidence=evidence, data=data,
    )
