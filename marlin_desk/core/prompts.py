"""The two prompts Marlin-2B was trained on. Exact text: any change costs accuracy silently."""

CAPTION_PROMPT = (
    "Provide a spatial description of this clip followed by time-ranged events.\n"
    "For each event, give the time range as <start - end> and a short description."
)
CAPTION_MAX_NEW_TOKENS = 2048

FIND_MAX_NEW_TOKENS = 64
_FIND_TEMPLATE = (
    'Identify the timestamps during which "{event}" takes place. '
    'Output the time range as "From <start> to <end>." (numbers in seconds).'
)


def find_prompt(event: str) -> str:
    """The find prompt for one plain-language query (whitespace collapsed, quotes kept)."""
    event = " ".join(event.split())
    if not event:
        raise ValueError("the query is empty")
    return _FIND_TEMPLATE.format(event=event)
