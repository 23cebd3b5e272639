#!/usr/bin/env python3
"""Checks that src/ includes follow the rooms of cmake/rooms.txt (docs/architecture.md).

A file in room R may include the public API (include/ferry/), files of R, and files of the rooms R builds on
(`R: ROOMS` in cmake/rooms.txt), directly or through them. Quoted includes are resolved as the compiler does:
beside the including file first, then from src/ (or include/), so `../` paths count too. Every violation is
printed as `path:line: room R includes "X" (room S, which R does not build on)`, and so is a source file in no
room. Exit status: 0 clean, 1 violations, 2 usage error.

  scripts/check_layering.py [--root DIR]   (DIR: the project root, default: this script's parent folder)
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_SUFFIXES = ('.h', '.cc', '.cu', '.cuh', '.inc')
# Files that protoc and grpc_cpp_plugin write into build/generated/src/server/ at build time.
GENERATED = re.compile(r'^src/server/[a-z_]+\.(pb|grpc\.pb)\.h$')


def read_rooms(root):
    """{room: the rooms it may include, itself among them}, from `ROOM: ROOMS IT BUILDS ON` lines."""
    path = os.path.join(root, 'cmake', 'rooms.txt')
    allowed = {}
    with open(path, encoding='utf-8') as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            room, sep, deps = line.partition(':')
            room = room.strip()
            if not sep or not room:
                raise SystemExit(f'{path}:{lineno}: "{line}" is not "ROOM: ROOMS IT BUILDS ON"')
            if room in allowed:
                raise SystemExit(f'{path}:{lineno}: room {room} is listed twice')
            rooms = {room}
            for dep in deps.split():
                if dep not in allowed:
                    raise SystemExit(f'{path}:{lineno}: {room} builds on "{dep}", which is not a room listed before it')
                rooms |= allowed[dep]
            allowed[room] = rooms
    return allowed


def room_of(rel, rooms):
    """The room of a path relative to src/: the longest room that is a folder prefix of it, or None."""
    best = None
    for room in rooms:
        if rel == room or rel.startswith(room + '/'):
            if best is None or len(room) > len(best):
                best = room
    return best


def resolve(root, including_dir, target):
    """Path relative to root of what `#include "target"` names, or None when it is not a project file."""
    if GENERATED.match(target):
        return target
    for base in (including_dir, os.path.join(root, 'src'), os.path.join(root, 'include')):
        candidate = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(candidate):
            return os.path.relpath(candidate, root)
    return None


def check(root):
    allowed = read_rooms(root)
    rooms = list(allowed)
    src = os.path.join(root, 'src')
    problems = []
    for dirpath, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src).replace(os.sep, '/')
            room = room_of(rel, rooms)
            if room is None:
                problems.append(f'src/{rel}: in no room of cmake/rooms.txt (add its folder there, in order)')
                continue
            with open(path, encoding='utf-8', errors='replace') as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    found = resolve(root, dirpath, m.group(1))
                    if found is None:
                        continue  # a system or generated header reached through another include path
                    found = found.replace(os.sep, '/')
                    if found.startswith('include/'):
                        continue  # the public API: every room may use it
                    if not found.startswith('src/'):
                        problems.append(f'src/{rel}:{lineno}: includes "{m.group(1)}" outside src/ and include/')
                        continue
                    target_room = room_of(found[len('src/'):], rooms)
                    if target_room is None:
                        problems.append(f'src/{rel}:{lineno}: includes "{m.group(1)}", which is in no room')
                    elif target_room not in allowed[room]:
                        problems.append(f'src/{rel}:{lineno}: room {room} includes "{m.group(1)}" (room '
                                        f'{target_room}, which {room} does not build on in cmake/rooms.txt)')
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--root', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = parser.parse_args()
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f'{len(problems)} layering violation(s): a room may include only include/ferry/, itself and the '
              'rooms it builds on (cmake/rooms.txt)')
        return 1
    print('layering: every include of src/ follows the rooms of cmake/rooms.txt')
    return 0


if __name__ == '__main__':
    sys.exit(main())
