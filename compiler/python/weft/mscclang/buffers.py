"""MSCCLang's buffers (msccl.language.buffer): which buffer a chunk reference names, and the
scratch buffers a program creates on a rank."""

from enum import Enum


class Buffer(Enum):
    input = "i"
    output = "o"
    scratch = "s"

    def __str__(self):
        return self.value

    def __lt__(self, other):
        return self.value < other.value

    def __gt__(self, other):  # msccl-tools' definition, kept as it is
        return self.value < other.value


class BufferSlice:
    """A scratch buffer of one rank: grows when written past its end (append)."""

    def __init__(self, buf, name):
        self.name = name
        self.buf = buf
        self.offset = -1
        self.chunks = []

    def get_buffer(self):
        return self.buf

    def instance_size(self):
        return len(self.chunks)

    def set_offset(self, offset):
        self.offset = offset

    def get_global_index(self, index):
        return self.offset + index

    def __getitem__(self, index):
        return self.chunks[index]

    def __setitem__(self, index, value):
        while len(self.chunks) < index:
            self.chunks.append(None)
        if index == len(self.chunks):
            self.chunks.append(value)
        else:
            self.chunks[index] = value

    def __len__(self):
        return len(self.chunks)

    def __iter__(self):
        return iter(self.chunks)
