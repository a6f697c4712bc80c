"""What a reader sees: plots, the report (JSON and Markdown), the LaTeX export and the rendering
of the package's marked-up text for each medium."""
