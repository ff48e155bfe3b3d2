"""Exports the real-architecture fixtures with torch (run where torch is installed, e.g. the GPU machine):
random-init torchvision / transformers models, exported to ONNX, weights stripped to seeded specs.
  python3 scripts/export_fixtures.py OUT_DIR [NAME...]     (names: only those fixtures)
"""

import os
import sys

import onnx
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "models"))
from fixture_format import strip_weights  # noqa: E402


def vision(name, **kw):
    import torchvision

    model = getattr(torchvision.models, name)(weights=None, **kw)
    return model


def vit_features():
    import torchvision

    model = torchvision.models.vit_b_16(weights=None)
    model.heads = torch.nn.Identity()  # the random-init head is all zeros
    return model


class BertEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import BertConfig, BertModel

        torch.manual_seed(0)
        self.bert = BertModel(BertConfig(), add_pooling_layer=False)

    def forward(self, input_ids, attention_mask):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class Gpt2Small(torch.nn.Module):
    """GPT-2 small (124M: 12 layers, 768 wide), the decoder-only stack without the LM head or a KV cache."""

    def __init__(self):
        super().__init__()
        from transformers import GPT2Config, GPT2Model

        torch.manual_seed(0)
        self.gpt2 = GPT2Model(GPT2Config(use_cache=False))

    def forward(self, input_ids, attention_mask):
        return self.gpt2(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state


class LstmTagger(torch.nn.Module):
    """A 2-layer bidirectional batch-first LSTM and a linear head: torch's LSTM export (opset 17)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lstm = torch.nn.LSTM(32, 48, num_layers=2, bidirectional=True, batch_first=True)
        self.head = torch.nn.Linear(96, 10)

    def forward(self, x):
        return self.head(self.lstm(x)[0])


class LstmSpeech(torch.nn.Module):
    """A speech recognizer's shape: a strided Conv1d front end over 80 filterbank features, a 2-layer bidirectional
    time-major LSTM, a linear head over 29 characters and LogSoftmax, as CTC models are exported."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.frontend = torch.nn.Conv1d(80, 128, kernel_size=5, stride=2, padding=2)
        self.lstm = torch.nn.LSTM(128, 96, num_layers=2, bidirectional=True)
        self.head = torch.nn.Linear(192, 29)

    def forward(self, features):  # features: [batch, frames, 80]
        x = torch.relu(self.frontend(features.transpose(1, 2)))  # [batch, 128, steps]
        x = self.lstm(x.permute(2, 0, 1))[0]  # [steps, batch, 192]
        return torch.log_softmax(self.head(x), dim=-1)


def export(model, args, names, out_path, dynamic):
    model.eval()
    torch.onnx.export(model, args, out_path, input_names=names[0], output_names=names[1], opset_version=17,
                      dynamic_axes=dynamic, do_constant_folding=True, dynamo=False)
    m = onnx.load(out_path)
    m.producer_name = "pytorch " + torch.__version__ + " (lockstep fixture)"
    onnx.save(strip_weights(m), out_path)
    print(out_path, os.path.getsize(out_path), "bytes")


def main(out_dir, only=()):
    os.makedirs(out_dir, exist_ok=True)
    if "lstm_tagger" in only or not only:
        sequence = torch.randn(1, 20, 32)
        export(LstmTagger(), (sequence,), [["input"], ["output"]], os.path.join(out_dir, "lstm_tagger.onnx"),
               {"input": {0: "batch"}, "output": {0: "batch"}})
    if "lstm_speech" in only or not only:
        features = torch.randn(1, 100, 80)
        export(LstmSpeech(), (features,), [["features"], ["log_probs"]], os.path.join(out_dir, "lstm_speech.onnx"),
               {"features": {0: "batch"}, "log_probs": {0: "steps", 1: "batch"}})
    torch.manual_seed(0)
    image = torch.randn(1, 3, 224, 224)
    image_io = ([["input"], ["output"]], {"input": {0: "batch"}, "output": {0: "batch"}})
    for name, builder in [("resnet50", lambda: vision("resnet50")),
                          ("mobilenet_v3_large", lambda: vision("mobilenet_v3_large")),
                          ("efficientnet_b0", lambda: vision("efficientnet_b0")),
                          ("vit_b_16_features", vit_features)]:
        if only and name not in only:
            continue
        torch.manual_seed(0)
        export(builder(), (image,), image_io[0], os.path.join(out_dir, name + ".onnx"), image_io[1])
    text_io = ([["input_ids", "attention_mask"], ["last_hidden_state"]],
               {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                "last_hidden_state": {0: "batch", 1: "seq"}})
    if "bert_base_encoder" in only or not only:
        ids = torch.randint(0, 30522, (1, 128))
        mask = torch.ones(1, 128, dtype=torch.int64)
        export(BertEncoder(), (ids, mask), text_io[0], os.path.join(out_dir, "bert_base_encoder.onnx"), text_io[1])
    if "gpt2_small" in only or not only:
        torch.manual_seed(0)
        ids = torch.randint(0, 50257, (1, 128))
        mask = torch.ones(1, 128, dtype=torch.int64)
        export(Gpt2Small(), (ids, mask), text_io[0], os.path.join(out_dir, "gpt2_small.onnx"), text_io[1])


if __name__ == "__main__":
    main(sys.argv[1], tuple(sys.argv[2:]))
