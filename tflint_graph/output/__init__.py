"""What a run hands users: output formats, the fixes applied, the rule reference pages."""
