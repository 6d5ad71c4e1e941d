#version 450
in vec2 v_uv;
in float v_fog;
layout(binding = 1) uniform sampler2D tex;
layout(binding = 0) uniform Frame { mat4 mvp; mat4 mv; float density; } f;
layout(location = 0) out vec4 color;
void main() {
    vec4 c = texture(tex, v_uv);
    color = mix(vec4(0.6, 0.7, 0.8, 1.0), c, v_fog);
}
