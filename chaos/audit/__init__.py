"""``chaos audit``: a resilience report card for a training job.

battery (which faults, as scenarios) -> the run facade -> measure (figures from
each Report) -> model (Young/Daly intervals, ETTR) -> findings -> grading ->
card -> render_text (Markdown, JSON) / render_html. docs/audit.md.
"""
