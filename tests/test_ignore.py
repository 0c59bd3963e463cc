"""What the walk passes over: ignore files as git and ripgrep read them, include and exclude patterns,
files named like credentials, virtual environments known by what they are."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import write
from repositories import IGNORED, INDEXED, SKIPPED, write_repository

from indexer import corpus
from indexer.errors import ConfigError
from indexer.ignore import WalkRules, is_secret_name


def walked(folder: Path, **rules: object) -> corpus.WalkResult:
    return corpus.walk(folder, WalkRules(**rules))


def taken(folder: Path, **rules: object) -> list[str]:
    return [source.path for source in walked(folder, **rules).files]


@pytest.mark.heavy
def test_a_repository_gives_exactly_the_files_a_user_means(tmp_path):
    found = walked(write_repository(tmp_path / "repo"))
    assert [source.path for source in found.files] == INDEXED
    assert {skipped.path: skipped.kind for skipped in found.skipped} == SKIPPED
    assert found.ignored == IGNORED
    assert found.problems == []


@pytest.mark.heavy
def test_ignore_rules_agree_with_git_check_ignore(tmp_path):
    """Nested ignore files, negations, folder-only and anchored patterns, ``**``, a negation that
    cannot re-include a file of an excluded folder, and ``.git/info/exclude``: the files the walk
    keeps are exactly those git does not ignore."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    with open(repo / ".git" / "info" / "exclude", "a", encoding="utf-8") as exclude:
        exclude.write("*.local.md\n")
    write(
        repo / ".gitignore", "*.log.md\n!keep.log.md\n/top-only.md\nout/\nlogs/**\n!logs/x/\n**/cache/*.md\n"
    )
    write(repo / "a" / ".gitignore", "!*.log.md\n/b/\nsecret-*.md\n!secret-ok.md\n")
    write(repo / "out" / ".gitignore", "!*.md\n")  # inside an excluded folder: git never reads it
    names = [
        "x.log.md", "keep.log.md", "top-only.md", "a/top-only.md", "a/x.log.md", "a/b/c.md", "a/c/b/d.md",
        "a/secret-one.md", "a/secret-ok.md", "out/page.md", "sub/out/page.md", "logs/x/y.md", "logs/z.md",
        "cache/a.md", "deep/cache/b.md", "deep/cache/sub/c.md", "notes.local.md", "a/notes.local.md",
        "plain.md", "a/plain.md", "weird name [1].md",
    ]  # fmt: skip
    for name in names:
        write(repo / name, "text\n")
    everything = sorted(
        str(path.relative_to(repo)) for path in repo.rglob("*") if path.is_file() and ".git" not in path.parts
    )
    checked = subprocess.run(
        ["git", "-C", str(repo), "check-ignore", "--stdin"],
        input="\n".join(everything),
        capture_output=True,
        text=True,
    )
    assert checked.returncode in (0, 1), checked.stderr
    git_keeps = sorted(set(everything) - set(checked.stdout.splitlines()))
    ours = sorted(
        [*taken(repo), *(p for p in git_keeps if p.rsplit("/", 1)[-1] == ".gitignore")]
    )  # the walk reads ignore files as rules, git lists them as files
    assert ours == git_keeps
    assert "keep.log.md" in ours
    assert "a/x.log.md" in ours
    assert "out/page.md" not in ours


def test_dot_ignore_outranks_gitignore_and_a_deeper_file_outranks_a_shallower_one(tmp_path):
    write(tmp_path / ".gitignore", "*.md\n")
    write(tmp_path / ".ignore", "!wanted.md\n")
    write(tmp_path / "sub" / ".gitignore", "!*.md\n")
    write(tmp_path / "sub" / ".ignore", "unwanted.md\n")
    for name in ["wanted.md", "other.md", "sub/fine.md", "sub/unwanted.md"]:
        write(tmp_path / name, "x")
    assert taken(tmp_path) == ["sub/fine.md", "wanted.md"]


@pytest.mark.heavy
def test_no_ignore_turns_ignore_files_off_but_never_lets_secrets_in(tmp_path):
    repo = write_repository(tmp_path / "repo")
    found = walked(repo, ignore_files=False)
    paths = [source.path for source in found.files]
    assert {"build/guide.md", "generated/api.md", "scratch.md"} <= set(paths)
    assert found.ignored == 0
    assert ".env" not in paths
    left_out = {skipped.path: skipped.kind for skipped in found.skipped}
    assert {".env", ".env.example", "config/server.pem"} <= set(left_out)
    # a tool's files for machines stay out whatever the ignore files say
    assert (left_out["package-lock.json"], left_out["src/app.min.js"]) == ("lock file", "minified")


@pytest.mark.heavy
def test_include_and_exclude_narrow_the_walk_and_never_bring_back_an_ignored_file(tmp_path):
    repo = write_repository(tmp_path / "repo")
    assert taken(repo, include=("*.md", "*.rst"), exclude=("docs/env/",)) == [
        "README.md",
        "docs/guide.rst",
        "docs/important.tmp.md",
    ]
    assert taken(repo, include=("docs/",)) == ["docs/env/setup.md", "docs/guide.rst", "docs/important.tmp.md"]
    assert "build/guide.md" not in taken(repo, include=("build/",))


def test_a_bad_pattern_names_its_setting():
    with pytest.raises(ConfigError, match="exclude: '!' is not a valid gitignore pattern"):
        WalkRules(exclude=("!",))
    with pytest.raises(ConfigError, match="include: '' is not a pattern"):
        WalkRules(include=("",))


def test_a_malformed_line_in_an_ignore_file_is_reported_and_the_others_kept(tmp_path):
    write(tmp_path / ".gitignore", "!\nold.md\n")
    write(tmp_path / "old.md", "x")
    write(tmp_path / "new.md", "x")
    found = corpus.walk(tmp_path)
    assert [source.path for source in found.files] == ["new.md"]
    assert [(Path(path).name, reason.split(":")[0]) for path, reason in found.problems] == [
        (".gitignore:1", "ignore pattern not used")
    ]


def test_an_ignored_folder_is_never_listed(tmp_path, monkeypatch):
    write(tmp_path / ".gitignore", "node_stuff/\n")
    for number in range(5):
        write(tmp_path / "node_stuff" / f"pkg{number}" / "readme.md", "x")
    write(tmp_path / "doc.md", "x")
    listed = []
    real_scandir = os.scandir

    def recording_scandir(path):
        listed.append(Path(path).name)
        return real_scandir(path)

    monkeypatch.setattr(corpus.os, "scandir", recording_scandir)
    found = corpus.walk(tmp_path)
    assert [source.path for source in found.files] == ["doc.md"]
    assert found.ignored == 1
    assert listed == [tmp_path.name]


@pytest.mark.heavy
def test_ignore_files_above_the_root_apply_inside_its_repository_but_never_to_the_root_itself(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    write(repo / ".gitignore", "site/\ndocs/_build/\n*.tmp.md\n")
    write(repo / "docs" / "index.md", "x")
    write(repo / "docs" / "draft.tmp.md", "x")
    write(repo / "docs" / "_build" / "index.md", "x")
    write(repo / "site" / "page.md", "x")
    assert taken(repo / "docs") == ["index.md"]
    assert taken(repo / "site") == ["page.md"]  # asked for by name: its own parent's rule does not hide it
    outside = tmp_path / "plain"  # not in a repository: nothing above the root is read
    write(outside / "a.tmp.md", "x")
    write(tmp_path / ".gitignore", "*.md\n")
    assert taken(outside) == ["a.tmp.md"]


@pytest.mark.heavy
def test_a_worktree_reads_its_repository_exclude_file(tmp_path):
    main = tmp_path / "main"
    main.mkdir()
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    write(main / "readme.md", "x")
    git = ["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "readme.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    subprocess.run([*git, "worktree", "add", "-q", str(tmp_path / "wt")], check=True)
    with open(main / ".git" / "info" / "exclude", "a", encoding="utf-8") as exclude:
        exclude.write("private.md\n")
    write(tmp_path / "wt" / "private.md", "x")
    assert (tmp_path / "wt" / ".git").is_file()
    assert taken(tmp_path / "wt") == ["readme.md"]


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        (".env", True),
        (".env.production", True),
        (".env.example", True),
        ("app.env", True),
        ("id_rsa", True),
        ("id_ed25519.pub", True),
        ("server.PEM", True),
        ("tls.key", True),
        (".netrc", True),
        (".npmrc", True),
        (".pypirc", True),
        ("credentials", True),
        ("credentials.json", True),
        ("secrets.yaml", True),
        ("terraform.tfstate", True),
        (".s3cfg", True),  # INI files of keys and passwords, which declare their format: read if allowed
        (".my.cnf", True),
        ("my.cnf", False),  # a server's configuration
        ("credentials.md", False),  # prose about credentials, not credentials
        ("secrets.rst", False),
        ("credentials.asc", False),  # a chapter of an AsciiDoc book (Pro Git's)
        ("environment.md", False),
        ("keys.md", False),
        ("envoy.yaml", False),
    ],
)
def test_files_named_like_credentials(name, secret):
    assert is_secret_name(name) is secret


@pytest.mark.heavy
def test_a_secret_is_let_in_only_by_name(tmp_path):
    repo = write_repository(tmp_path / "repo")
    found = walked(repo, allow_secrets=(".env.example",))
    assert ".env.example" in [source.path for source in found.files]
    assert {s.path for s in found.skipped if s.kind == "secret"} == {"config/server.pem"}


def test_a_virtual_environment_is_known_by_what_it_is_not_by_its_name(tmp_path):
    write(tmp_path / "env" / "index.md", "docs in a folder called env")
    write(tmp_path / "venv" / "notes.md", "a folder called venv that is no environment")
    write(tmp_path / "tools" / "pyvenv.cfg", "home = /usr/bin\n")
    write(tmp_path / "tools" / "lib" / "x.py", "x")
    write(tmp_path / "py" / "conda-meta" / "history", "x")
    write(tmp_path / "py" / "lib" / "y.py", "x")
    assert taken(tmp_path) == ["env/index.md", "venv/notes.md"]


def test_a_sphinx_builds_own_data_is_known_by_what_is_beside_it(tmp_path):
    def sphinx_build(folder: Path, *markers: str) -> None:
        for marker in markers:
            write(folder / marker, "Search.setIndex({})" if marker.endswith(".js") else "# Sphinx\n")
        write(folder / "fernet.html", "<h1>Fernet</h1><p>Symmetric encryption.</p>")
        write(folder / "_sources" / "fernet.rst.txt", "Fernet\n======\n\nSymmetric encryption.\n")
        write(folder / "_modules" / "fernet.html", "<pre>class Fernet: ...</pre>")
        write(folder / "_static" / "doctools.js", "const Documentation = {};")

    sphinx_build(tmp_path / "html", "searchindex.js", "objects.inv")
    sphinx_build(tmp_path / "half", "searchindex.js")  # no inventory: no Sphinx build's
    write(tmp_path / "notes" / "_sources" / "list.md", "a folder named _sources beside no build")
    assert taken(tmp_path) == [
        "half/_modules/fernet.html", "half/_sources/fernet.rst.txt", "half/_static/doctools.js",
        "half/fernet.html", "half/searchindex.js", "html/fernet.html", "notes/_sources/list.md",
    ]  # fmt: skip
    walk_filter = corpus.WalkFilter(tmp_path, WalkRules())  # what `index watch` takes, the same
    assert not walk_filter.takes("html/_sources/fernet.rst.txt") and not walk_filter.takes("html/_sources")
    assert not walk_filter.takes("html/_modules/fernet.html") and walk_filter.takes("html/fernet.html")
    assert walk_filter.takes("half/_sources/fernet.rst.txt") and walk_filter.takes("notes/_sources/list.md")
    # the markers make or unmake a build: a change to one wakes a build, which reads what they say
    assert walk_filter.takes("half/objects.inv") and walk_filter.takes("html/searchindex.js")


def test_a_sphinx_sources_static_files_and_templates_are_left_as_its_output_leaves_them(tmp_path):
    # what html_static_path names is copied into the output as it is: a theme's scripts, jQuery
    for folder in ("docs", "plain"):
        write(tmp_path / folder / "index.rst", "Welcome\n=======\n")
        write(tmp_path / folder / "_static" / "jquery-3.js", "/*! jQuery v3 */ function jQuery() {}")
        write(tmp_path / folder / "_templates" / "layout.html", "{% extends '!layout.html' %}")
    write(tmp_path / "docs" / "conf.py", "project = 'xonsh'\nhtml_static_path = ['_static']\n")
    write(tmp_path / "plain" / "conf.py", "debug = True\n")  # a conf.py of no Sphinx project's
    assert taken(tmp_path) == [
        "docs/conf.py", "docs/index.rst",
        "plain/_static/jquery-3.js", "plain/_templates/layout.html", "plain/conf.py", "plain/index.rst",
    ]  # fmt: skip
    walk_filter = corpus.WalkFilter(tmp_path, WalkRules())
    assert not walk_filter.takes("docs/_static/jquery-3.js") and walk_filter.takes("docs/index.rst")


def test_a_doxygen_outputs_scripts_and_styles_are_known_by_what_is_at_its_top(tmp_path):
    def doxygen_output(folder: Path, *markers: str) -> None:
        for marker in markers:
            write(folder / marker, "/* The standard CSS for doxygen 1.9.4 */")
        write(folder / "index.html", "<h1>SDL</h1>")
        write(folder / "navtreeindex0.js", 'var NAVTREEINDEX0 = {"index.html": [0]};')
        write(folder / "d3" / "d78" / "_s_d_l__audio_8h.html", "<h1>SDL_audio.h File Reference</h1>")
        write(folder / "d3" / "d78" / "_s_d_l__audio_8h.js", 'var _s_d_l__audio_8h = [["SDL_OpenAudio"]];')
        write(folder / "search" / "all_0.js", "var searchData = [];")

    doxygen_output(tmp_path / "html", "doxygen.css", "dynsections.js")
    doxygen_output(tmp_path / "half", "doxygen.css")  # no dynsections.js: no Doxygen output's
    write(tmp_path / "app" / "src" / "main.js", "export function main() {}")
    assert taken(tmp_path) == [
        "app/src/main.js",
        "half/d3/d78/_s_d_l__audio_8h.html", "half/d3/d78/_s_d_l__audio_8h.js", "half/doxygen.css",
        "half/index.html", "half/navtreeindex0.js", "half/search/all_0.js",
        "html/d3/d78/_s_d_l__audio_8h.html", "html/index.html",
    ]  # fmt: skip
    walk_filter = corpus.WalkFilter(tmp_path, WalkRules())  # what `index watch` takes, the same
    assert not walk_filter.takes("html/d3/d78/_s_d_l__audio_8h.js") and not walk_filter.takes("html/search")
    assert walk_filter.takes("html/d3/d78/_s_d_l__audio_8h.html") and walk_filter.takes("app/src/main.js")
    assert walk_filter.takes("half/dynsections.js")  # a marker: a change to it wakes a build


#: Each generator's markers, pages a reader wants (listing pages among them), and what it writes for
#: its own use, as each writes them (checked on real outputs: jsoup's javadoc, bytes' and log's
#: rustdoc, rustup's std and books, mkdocs-material's own site; JDK 25's javadoc of a class;
#: Docusaurus' classic site and Hugo's site of fastify's and undici's docs).
#: How each generator names itself in the file it is known by, as it writes it.
GENERATOR_STAMPS = {
    "javadoc": "<!-- Generated by javadoc -->",
    "rustdoc": '<meta name="generator" content="rustdoc">',
    "mdBook": "<!-- Book generated using mdBook -->",
    "MkDocs": "<!-- MkDocs version : 1.6.1 -->",
    "Docusaurus": '<meta name=generator content="Docusaurus v3.10.2">',
    "Hugo": '<meta name="generator" content="Hugo 0.111.3">',
}
GENERATOR_OUTPUTS = {
    "javadoc": (
        ("element-list", "script.js"),
        ["org/jsoup/nodes/Element.html", "org/jsoup/nodes/class-use/Element.html", "index-all.html",
         "index.html"],
        ["member-search-index.js", "search.js", "stylesheet.css", "jquery/jquery-3.5.1.js",
         "legal/jquery.md", "src-html/org/jsoup/Jsoup.html"],
    ),
    "javadoc since JDK 23, its scripts in a folder": (
        ("script-files", "element-list"),  # a folder and a file
        ["p/A.html", "p/class-use/A.html", "index-files/index-1.html", "search.html", "index.html"],
        ["script-files/script.js", "script-files/jquery-3.7.1.min.js", "resource-files/stylesheet.css",
         "resource-files/fonts/dejavu.css", "member-search-index.js", "legal/jquery.md"],
    ),
    "javadoc before JDK 10": (
        ("package-list", "script.js"),
        ["org/jsoup/Jsoup.html", "overview-summary.html", "index.html"],
        ["stylesheet.css", "resources/readme.txt"],
    ),
    "rustdoc": (
        ("crates.js", "settings.html"),
        ["bytes/struct.Bytes.html", "bytes/buf/trait.Buf.html", "bytes/all.html"],
        ["src/bytes/bytes.rs.html", "static.files/rustdoc-2f3e.css", "static.files/main-1a2b.js",
         "search.index/root.js", "trait.impl/core/clone/trait.Clone.js", "bytes/sidebar-items.js",
         "src-files.js", "help.html"],
    ),
    "rustdoc since Rust 1.67, its scripts suffixed": (
        ("static.files", "settings.html"),  # a folder and a file
        ["std/io/struct.Stdout.html", "std/index.html"],
        ["static.files/main-7ef8a74a.js", "crates1.95.0.js", "src-files1.95.0.js", "src/std/io/stdio.rs.html",
         "type.impl/core/result/enum.Result.js"],
    ),
    "mdBook": (
        (".nojekyll", "print.html"),
        ["ch01-00-getting-started.html", "index.html", "reference/manifest.html"],
        ["toc.html", "404.html", "searchindex-6a1da8cc.js", "searchindex.json", "book-a0b12cfe.js",
         "css/chrome-ae938929.css", "theme/reference-da60281b.js"],
    ),
    "MkDocs": (
        ("sitemap.xml", "sitemap.xml.gz"),
        ["setup/changing-the-colors/index.html", "index.html", "schema.json"],
        ["search/search_index.json", "assets/javascripts/bundle.f1a2.min.js",
         "assets/stylesheets/main.css", "404.html"],
    ),
    "Docusaurus": (
        ("assets", "404.html"),  # a folder and a file
        ["docs/Reference/Hooks/index.html", "index.html", "blog/welcome/index.html",
         "markdown-page/index.html"],
        ["assets/js/main.a66f091d.js", "assets/js/1997d652.203bd1c1.js", "assets/css/styles.7ab5.css",
         "sitemap.xml", "blog/rss.xml", "blog/atom.xml"],
    ),
    "Hugo": (
        ("index.xml", "sitemap.xml"),
        ["docs/api/client/index.html", "index.html", "tags/index.html"],
        ["docs/api/index.xml", "tags/index.xml", "css/style.css", "js/theme.js", "404.html"],
    ),
}  # fmt: skip


def read_by_name(path: str) -> bool:
    """Whether a walk reads a file so named anywhere (a minified script is never read)."""
    return corpus.is_text_name(path) and corpus.machine_written_kind(path) is None


@pytest.mark.parametrize("generator", GENERATOR_OUTPUTS)
def test_a_generators_own_data_is_known_by_its_markers(tmp_path, generator):
    """Its markers and its name where it writes it make an output; one marker alone, or the markers
    in a project that does not name the generator (a website's sitemaps), make none."""
    markers, pages, own = GENERATOR_OUTPUTS[generator]
    stamp = GENERATOR_STAMPS[generator.split()[0]]
    outputs = (("html", markers, stamp), ("half", markers[:1], stamp), ("site", markers, "a website"))
    for output, present, says in outputs:
        for path in (*pages, *own, *present):
            if any(other.startswith(f"{path}/") for other in own):
                continue  # a folder (rustdoc's static.files), made by the files in it
            write(tmp_path / output / path, f"<html><head>{says}</head><body><h1>{path}</h1></body></html>")
    whole = [path for path in (*pages, *own, *markers) if read_by_name(path)]
    read = [f"half/{path}" for path in whole if path not in markers[1:]] + [f"site/{path}" for path in whole]
    assert sorted(taken(tmp_path)) == sorted(read + [f"html/{page}" for page in pages])
    walk_filter = corpus.WalkFilter(tmp_path, WalkRules())  # what `index watch` takes, the same
    assert all(walk_filter.takes(f"html/{page}") for page in pages)
    # (a change to a marker beside the others of its generator wakes a build, another's too:
    # MkDocs' 404.html beside its assets/ is Docusaurus')
    paired = {
        marker
        for build in corpus.DOCS_BUILDS
        if all(os.path.lexists(tmp_path / "html" / other) for other in build.markers)
        for marker in build.markers
    }
    assert not any(walk_filter.takes(f"html/{path}") for path in own if path not in paired)
    assert all(walk_filter.takes(f"site/{path}") for path in own if read_by_name(path))
    made = tmp_path / "half" / markers[1]
    if any(path.startswith(f"{markers[1]}/") for path in own):  # a folder (rustdoc's static.files)
        made.mkdir()
    else:
        write(made, f"<html><head>{stamp}</head></html>")
    assert walk_filter.takes(f"half/{markers[1]}")  # the output made: what the folder holds is read again


def test_a_site_generator_is_named_by_its_generator_meta_and_version(tmp_path):
    """Hugo and Docusaurus are named by the generator meta they write, with its version: an author
    called Hugo, a description naming Docusaurus, or a theme's template printing the version (a
    Hugo project's own layouts) make no output, and their folders are read whole."""
    says = {
        "blog": '<meta name="author" content="Hugo Smith">',
        "plugins": '<meta name="description" content="Docusaurus plugins we like">',
        "layouts": '<meta name="generator" content="Hugo {{ hugo.Version }}">',
        "public": '<meta name="generator" content="Hugo 0.111.3">',
    }
    for folder, meta in says.items():
        write(tmp_path / folder / "index.html", f"<html><head>{meta}</head><body><h1>Home</h1></body></html>")
        for name in ("index.xml", "sitemap.xml", "404.html", "assets/app.js"):
            write(tmp_path / folder / name, "<rss>text</rss>" if name.endswith(".xml") else "<p>x</p>")
    read = set(taken(tmp_path))
    for folder in ("blog", "plugins", "layouts"):
        assert {f"{folder}/index.xml", f"{folder}/404.html", f"{folder}/assets/app.js"} <= read, folder
    assert {path for path in read if path.startswith("public/")} == {"public/index.html"}


@pytest.mark.timeout(30)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_stamp_that_is_no_regular_file_is_not_read(tmp_path):
    """A FIFO planted where a generator writes its name would hang the walk on ``open`` (it waits
    for a writer), and a link there, to a page naming the generator outside the folder, is not
    followed: the folder is known as no output, and read."""
    outside = tmp_path / "elsewhere" / "index.html"
    write(outside, "<html><!-- MkDocs version : 1.6.1 --></html>")
    for site, planted in (("fifo", os.mkfifo), ("link", lambda path: os.symlink(outside, path))):
        write(tmp_path / site / "sitemap.xml", "<urlset/>")
        write(tmp_path / site / "sitemap.xml.gz", "x")
        write(tmp_path / site / "app.js", "export const mkdocs = 1;")
        planted(tmp_path / site / "index.html")
    assert {"fifo/app.js", "link/app.js"} <= set(taken(tmp_path))


def test_a_marker_wakes_a_build_only_where_the_walk_goes(tmp_path):
    write(tmp_path / "site" / "sitemap.xml", "<urlset/>")
    walk_filter = corpus.WalkFilter(tmp_path, WalkRules())
    assert walk_filter.takes("site/sitemap.xml.gz")
    assert not walk_filter.takes("node_modules/site/sitemap.xml.gz")
    assert not walk_filter.takes(".cache/javadoc/script.js")
    assert not walk_filter.takes("node_modules/pkg/docs/searchindex.js")
    # a marker wakes a build only beside the others of its generator: mdBook's own 404.html is
    # Docusaurus' marker with an assets folder, and a page of the book's own data without one
    write(tmp_path / "book" / ".nojekyll", "")
    write(tmp_path / "book" / "print.html", "<html><!-- Book generated using mdBook --></html>")
    write(tmp_path / "book" / "404.html", "<html><h1>Not found</h1></html>")
    assert not walk_filter.takes("book/404.html")
    (tmp_path / "book" / "assets").mkdir()
    assert walk_filter.takes("book/404.html")


@pytest.mark.heavy
def test_the_walk_filter_takes_exactly_what_the_walk_takes(tmp_path):
    repo = write_repository(tmp_path / "repo")
    rules = WalkRules(exclude=("docs/env/",))
    walk_filter = corpus.WalkFilter(repo, rules)
    everything = [str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts]
    kept = {path for path in everything if walk_filter.takes(path)}
    assert kept == set(taken(repo, exclude=("docs/env/",))) | {".gitignore", "docs/.gitignore"}
    assert walk_filter.takes("docs/new-folder")
    assert not walk_filter.takes("build/gone.md")
