from .base import BaseModel


class Mid(BaseModel):
    pass
