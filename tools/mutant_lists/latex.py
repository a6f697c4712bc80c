"""Mutants of the LaTeX export (verify/outputs/latex.py): one-line changes and the tests that must catch each."""

from mutant import M

T = "tests/test_latex.py"

MUTANTS = [
    M('latex-plot-link-outside', 'verify/outputs/latex.py',
      '    if not real.is_relative_to(folder):',
      '    if False:',
      (f"{T}::test_hostile_report_is_refused_reading_and_writing_nothing_outside",)),
    M('latex-name-chars', 'verify/outputs/latex.py',
      'or not set(value) <= NAME_CHARS:',
      ':',
      (f"{T}::test_hostile_report_is_refused_reading_and_writing_nothing_outside",)),
    M('latex-claim-id', 'verify/outputs/latex.py',
      '    if value not in CLAIM_IDS:',
      '    if value is None:',
      (f"{T}::test_hostile_report_is_refused_reading_and_writing_nothing_outside",)),
    M('latex-not-png', 'verify/outputs/latex.py',
      '        if fh.read(len(PNG_MAGIC)) != PNG_MAGIC:',
      '        if fh.read(len(PNG_MAGIC)) is None:',
      (f"{T}::test_hostile_report_is_refused_reading_and_writing_nothing_outside",)),
    M('latex-out-link', 'verify/outputs/latex.py',
      '    if not real.is_relative_to(out.resolve()) or path.is_symlink():',
      '    if path.is_symlink():',
      (f"{T}::test_output_links_out_of_o_are_refused", f"{T}::test_a_path_whose_folder_links_out_of_o_is_refused")),
    M('latex-escape-brace', 'verify/outputs/latex.py',
      '_SPECIAL = {"\\\\": r"\\textbackslash{}", "{": r"\\{",',
      '_SPECIAL = {"\\\\": r"\\textbackslash{}", "{": "{",',
      (f"{T}::test_texts_are_rendered_by_the_markup_and_legacy_text_is_escaped",
       f"{T}::test_tex_holds_no_unvalidated_name_or_command")),
    M('latex-markup-ignored', 'verify/outputs/latex.py',
      '        spans = markup.parse(value, "text")',
      '        spans = markup.parse(value + "\\\\", "text")',
      (f"{T}::test_texts_are_rendered_by_the_markup_and_legacy_text_is_escaped",)),
    M('latex-break-sign', 'verify/outputs/latex.py',
      '                sign, term = "- ", -term',
      '                sign, term = "+ ", -term',
      (f"{T}::test_breaker_known_answers",
       f"{T}::test_every_formula_is_typeset_and_its_lines_are_sympys_printing")),
    M('latex-break-fraction', 'verify/outputs/latex.py',
      '            lead = [rf"\\frac{{1}}{{{lower[0]}}}"] if len(lower) == 1',
      '            lead = [rf"\\frac{{{lower[0]}}}{{1}}"] if len(lower) == 1',
      (f"{T}::test_breaker_known_answers",)),
    M('latex-memo-by-equality', 'verify/outputs/latex.py',
      '        hit = self._memo.get(id(expr))\n        if hit is None or hit[0] is not expr:\n'
      '            hit = self._memo[id(expr)]',
      '        hit = self._memo.get(hash(expr))\n        if hit is None or hit[0] != expr:\n'
      '            hit = self._memo[hash(expr)]',
      (f"{T}::test_formulas_are_printed_as_proofs_notation_prints_them",),
      "SymPy counts Subs at different points as equal: an equality-keyed memo prints the wrong point"),
]
