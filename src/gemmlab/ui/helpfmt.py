"""Help placeholders that read as a user types them.

Typer's rich help shows a type column: `<bool>` beside flags, `<list[str]>`
beside arguments whose name already says it, `<int,int,int>...` for a tuple
that is typed as three separate numbers. `install()` makes that column show
nothing for flags and arguments, and an option's own metavar where it has one
(`MxNxK`, `GROUP`). Typer versions without these hooks are left as they are.

Some typer versions also write a required argument in the usage line as
`{NAME}`, which reads as a template's placeholder; `install()` writes it
`NAME`, as click does (an optional one stays `[NAME]`).
"""

from __future__ import annotations


def install() -> None:
    try:
        from typer.core import TyperArgument, TyperOption
    except ImportError:  # pragma: no cover - an older typer without these classes
        return
    if not hasattr(TyperOption, "display_type_rich"):  # pragma: no cover
        return
    plain = TyperOption.display_type_rich

    def option_placeholder(self, ctx):
        if self.is_flag:
            return None
        return self.metavar if self.metavar is not None else plain(self, ctx)

    TyperOption.display_type_rich = option_placeholder
    TyperArgument.display_type_rich = lambda self, ctx: None
    if hasattr(TyperArgument, "_usage_display_name"):
        braced = TyperArgument._usage_display_name

        def usage_name(self) -> str:
            name = braced(self)
            if self.required and name.startswith("{"):
                name = self.display_name_raw + name[len(self.display_name_raw) + 2:]
            return name

        TyperArgument._usage_display_name = usage_name
